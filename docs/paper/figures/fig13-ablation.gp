# Draws figures/fig13-ablation.png and figures/fig13-ablation.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig13-ablation.gp
set encoding utf8
set terminal pngcairo noenhanced size 1200,460 font 'sans,10'
set output 'figures/fig13-ablation.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figure 13: ablation, cumulative energy and time over all recurrences relative to full Zeus (per seed; mean and sd; V100)'
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:*]
set xtics rotate by -25 scale 0
set key top left horizontal font ',9'
set title 'ETA'
set ylabel 'cumulative ETA / full Zeus'
plot 'csv/fig13-bars.csv' skip 1 using 3:4:xtic(2) title 'no early stopping' lc rgb '#fdae6b', 'csv/fig13-bars.csv' skip 1 using 5:6 title 'no pruning' lc rgb '#74c476', 'csv/fig13-bars.csv' skip 1 using 7:8 title 'no JIT profiling' lc rgb '#9e9ac8', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'full Zeus'
set title 'TTA'
set ylabel 'cumulative TTA / full Zeus'
plot 'csv/fig13-bars.csv' skip 1 using 9:10:xtic(2) title 'no early stopping' lc rgb '#fdae6b', 'csv/fig13-bars.csv' skip 1 using 11:12 title 'no pruning' lc rgb '#74c476', 'csv/fig13-bars.csv' skip 1 using 13:14 title 'no JIT profiling' lc rgb '#9e9ac8', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'full Zeus'

unset multiplot
set terminal svg noenhanced size 1200,460 font 'sans,10' background '#ffffff'
set output 'figures/fig13-ablation.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figure 13: ablation, cumulative energy and time over all recurrences relative to full Zeus (per seed; mean and sd; V100)'
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:*]
set xtics rotate by -25 scale 0
set key top left horizontal font ',9'
set title 'ETA'
set ylabel 'cumulative ETA / full Zeus'
plot 'csv/fig13-bars.csv' skip 1 using 3:4:xtic(2) title 'no early stopping' lc rgb '#fdae6b', 'csv/fig13-bars.csv' skip 1 using 5:6 title 'no pruning' lc rgb '#74c476', 'csv/fig13-bars.csv' skip 1 using 7:8 title 'no JIT profiling' lc rgb '#9e9ac8', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'full Zeus'
set title 'TTA'
set ylabel 'cumulative TTA / full Zeus'
plot 'csv/fig13-bars.csv' skip 1 using 9:10:xtic(2) title 'no early stopping' lc rgb '#fdae6b', 'csv/fig13-bars.csv' skip 1 using 11:12 title 'no pruning' lc rgb '#74c476', 'csv/fig13-bars.csv' skip 1 using 13:14 title 'no JIT profiling' lc rgb '#9e9ac8', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'full Zeus'

unset multiplot
set output
