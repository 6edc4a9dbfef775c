# Draws figures/fig10-drift.png and figures/fig10-drift.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig10-drift.gp
set encoding utf8
set terminal pngcairo noenhanced size 1100,440 font 'sans,10'
set output 'figures/fig10-drift.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figure 10: a drifting workload (synthetic; the best batch size moves from 64 to 256 at recurrence 151)'
set key top right font ',9'
set xlabel 'recurrence'
set title 'batch size chosen (geometric mean over seeds)'
set ylabel 'batch size'
set logscale y 2
set yrange [24:700]
plot 'csv/fig10-drift.csv' skip 1 using 1:2 with steps lw 2 dt 2 lc rgb 'black' title 'optimal', '' skip 1 using 1:3 with lines lw 1.5 lc rgb '#2b8cbe' title 'Zeus, window 10', '' skip 1 using 1:6 with lines lw 1.5 lc rgb '#e6550d' title 'Zeus, no window'
unset logscale y
set yrange [*:*]
set title 'cumulative regret (band = ±1 sd)'
set ylabel 'regret / C*'
set key top left
plot '' skip 1 using 1:($4-$5):($4+$5) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 using 1:($7-$8):($7+$8) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 using 1:4 with lines lw 2 lc rgb '#2b8cbe' title 'Zeus, window 10', '' skip 1 using 1:7 with lines lw 2 lc rgb '#e6550d' title 'Zeus, no window', 151 with impulses lc rgb 'black' notitle

unset multiplot
set terminal svg noenhanced size 1100,440 font 'sans,10' background '#ffffff'
set output 'figures/fig10-drift.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figure 10: a drifting workload (synthetic; the best batch size moves from 64 to 256 at recurrence 151)'
set key top right font ',9'
set xlabel 'recurrence'
set title 'batch size chosen (geometric mean over seeds)'
set ylabel 'batch size'
set logscale y 2
set yrange [24:700]
plot 'csv/fig10-drift.csv' skip 1 using 1:2 with steps lw 2 dt 2 lc rgb 'black' title 'optimal', '' skip 1 using 1:3 with lines lw 1.5 lc rgb '#2b8cbe' title 'Zeus, window 10', '' skip 1 using 1:6 with lines lw 1.5 lc rgb '#e6550d' title 'Zeus, no window'
unset logscale y
set yrange [*:*]
set title 'cumulative regret (band = ±1 sd)'
set ylabel 'regret / C*'
set key top left
plot '' skip 1 using 1:($4-$5):($4+$5) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 using 1:($7-$8):($7+$8) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 using 1:4 with lines lw 2 lc rgb '#2b8cbe' title 'Zeus, window 10', '' skip 1 using 1:7 with lines lw 2 lc rgb '#e6550d' title 'Zeus, no window', 151 with impulses lc rgb 'black' notitle

unset multiplot
set output
