# Draws figures/fig13-ablation.png and figures/fig13-ablation.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig13-ablation.gp
set encoding utf8
set terminal pngcairo noenhanced size 1200,480 font 'sans,10'
set output 'figures/fig13-ablation.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 13: ablation, cumulative energy and time over all recurrences relative to full Zeus (per seed; mean and sd; V100)'
unset key
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 10
set yrange [0.5:50.937]
set ytics (0.5, 1, 2, 5, 10, 20, 50, 100)
set xtics rotate by 25 right scale 0
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
set origin 0.0000,0.0583
set size 0.5000,0.8708
set title 'ETA'
set ylabel 'cumulative ETA / full Zeus (log scale)'
plot 'csv/fig13-bars.csv' skip 1 using 3:4:xtic(2) notitle lc rgb '#fdae6b', 'csv/fig13-bars.csv' skip 1 using 5:6 notitle lc rgb '#74c476', 'csv/fig13-bars.csv' skip 1 using 7:8 notitle lc rgb '#9e9ac8'
set origin 0.5000,0.0583
set size 0.5000,0.8708
set title 'TTA'
set ylabel 'cumulative TTA / full Zeus (log scale)'
plot 'csv/fig13-bars.csv' skip 1 using 9:10:xtic(2) notitle lc rgb '#fdae6b', 'csv/fig13-bars.csv' skip 1 using 11:12 notitle lc rgb '#74c476', 'csv/fig13-bars.csv' skip 1 using 13:14 notitle lc rgb '#9e9ac8'
set origin 0,0
set size 1,0.0583
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0583
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
set key at screen 0.5,screen 0.0292 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#fdae6b' title 'no early stopping', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#74c476' title 'no pruning', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#9e9ac8' title 'no JIT profiling', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'full Zeus (= 1)'

unset multiplot
set terminal svg noenhanced size 1200,480 font 'sans,10' background '#ffffff'
set output 'figures/fig13-ablation.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 13: ablation, cumulative energy and time over all recurrences relative to full Zeus (per seed; mean and sd; V100)'
unset key
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 10
set yrange [0.5:50.937]
set ytics (0.5, 1, 2, 5, 10, 20, 50, 100)
set xtics rotate by 25 right scale 0
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
set origin 0.0000,0.0583
set size 0.5000,0.8708
set title 'ETA'
set ylabel 'cumulative ETA / full Zeus (log scale)'
plot 'csv/fig13-bars.csv' skip 1 using 3:4:xtic(2) notitle lc rgb '#fdae6b', 'csv/fig13-bars.csv' skip 1 using 5:6 notitle lc rgb '#74c476', 'csv/fig13-bars.csv' skip 1 using 7:8 notitle lc rgb '#9e9ac8'
set origin 0.5000,0.0583
set size 0.5000,0.8708
set title 'TTA'
set ylabel 'cumulative TTA / full Zeus (log scale)'
plot 'csv/fig13-bars.csv' skip 1 using 9:10:xtic(2) notitle lc rgb '#fdae6b', 'csv/fig13-bars.csv' skip 1 using 11:12 notitle lc rgb '#74c476', 'csv/fig13-bars.csv' skip 1 using 13:14 notitle lc rgb '#9e9ac8'
set origin 0,0
set size 1,0.0583
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0583
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
set key at screen 0.5,screen 0.0292 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#fdae6b' title 'no early stopping', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#74c476' title 'no pruning', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#9e9ac8' title 'no JIT profiling', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'full Zeus (= 1)'

unset multiplot
set output
