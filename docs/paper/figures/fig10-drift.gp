# Draws figures/fig10-drift.png and figures/fig10-drift.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig10-drift.gp
set encoding utf8
set terminal pngcairo noenhanced size 1100,470 font 'sans,10'
set output 'figures/fig10-drift.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 10: a drifting workload (synthetic; the best batch size moves from 64 to 256 at recurrence 151)'
unset key
set xlabel 'recurrence'
set arrow from 151, graph 0 to 151, graph 1 nohead dt 3 lw 1.2 lc rgb '#555555'
set origin 0.0000,0.0596
set size 0.5000,0.8681
set title 'batch size chosen (geometric mean over seeds)'
set ylabel 'batch size'
set logscale y 2
set yrange [24:700]
plot 'csv/fig10-drift.csv' skip 1 using 1:2 with steps lw 2 dt 2 lc rgb 'black' notitle, '' skip 1 using 1:3 with lines lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 using 1:6 with lines lw 1.5 lc rgb '#e6550d' notitle
set origin 0.5000,0.0596
set size 0.5000,0.8681
unset logscale y
set yrange [*:*]
set title 'cumulative regret (band = ±1 sd)'
set ylabel 'regret / C* (optimal recurrences)'
plot 'csv/fig10-drift.csv' skip 1 using 1:($4-$5):($4+$5) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 using 1:($7-$8):($7+$8) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 using 1:4 with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 using 1:7 with lines lw 2 lc rgb '#e6550d' notitle
set origin 0,0
set size 1,0.0596
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0596
unset title
unset xlabel
unset ylabel
unset tics
unset border
unset grid
unset arrow
unset label
unset logscale
unset offsets
unset colorbox
set xrange [0:1]
set yrange [0:1]
set key at screen 0.5,screen 0.0298 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with steps lw 2 dt 2 lc rgb 'black' title 'optimal batch size', '+' using (NaN):(NaN) with lines lw 2 lc rgb '#2b8cbe' title 'Zeus, window 10', '+' using (NaN):(NaN) with lines lw 2 lc rgb '#e6550d' title 'Zeus, no window', '+' using (NaN):(NaN) with lines dt 3 lw 1.2 lc rgb '#555555' title 'the drift (recurrence 151)'

unset multiplot
set terminal svg noenhanced size 1100,470 font 'sans,10' background '#ffffff'
set output 'figures/fig10-drift.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 10: a drifting workload (synthetic; the best batch size moves from 64 to 256 at recurrence 151)'
unset key
set xlabel 'recurrence'
set arrow from 151, graph 0 to 151, graph 1 nohead dt 3 lw 1.2 lc rgb '#555555'
set origin 0.0000,0.0596
set size 0.5000,0.8681
set title 'batch size chosen (geometric mean over seeds)'
set ylabel 'batch size'
set logscale y 2
set yrange [24:700]
plot 'csv/fig10-drift.csv' skip 1 using 1:2 with steps lw 2 dt 2 lc rgb 'black' notitle, '' skip 1 using 1:3 with lines lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 using 1:6 with lines lw 1.5 lc rgb '#e6550d' notitle
set origin 0.5000,0.0596
set size 0.5000,0.8681
unset logscale y
set yrange [*:*]
set title 'cumulative regret (band = ±1 sd)'
set ylabel 'regret / C* (optimal recurrences)'
plot 'csv/fig10-drift.csv' skip 1 using 1:($4-$5):($4+$5) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 using 1:($7-$8):($7+$8) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 using 1:4 with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 using 1:7 with lines lw 2 lc rgb '#e6550d' notitle
set origin 0,0
set size 1,0.0596
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0596
unset title
unset xlabel
unset ylabel
unset tics
unset border
unset grid
unset arrow
unset label
unset logscale
unset offsets
unset colorbox
set xrange [0:1]
set yrange [0:1]
set key at screen 0.5,screen 0.0298 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with steps lw 2 dt 2 lc rgb 'black' title 'optimal batch size', '+' using (NaN):(NaN) with lines lw 2 lc rgb '#2b8cbe' title 'Zeus, window 10', '+' using (NaN):(NaN) with lines lw 2 lc rgb '#e6550d' title 'Zeus, no window', '+' using (NaN):(NaN) with lines dt 3 lw 1.2 lc rgb '#555555' title 'the drift (recurrence 151)'

unset multiplot
set output
