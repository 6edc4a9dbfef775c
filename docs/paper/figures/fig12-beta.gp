# Draws figures/fig12-beta.png and figures/fig12-beta.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig12-beta.gp
set encoding utf8
set terminal pngcairo noenhanced size 1000,480 font 'sans,10'
set output 'figures/fig12-beta.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set title 'Figure 12: cumulative ETA across β, relative to β = 2 (per seed; mean and sd over seeds), V100'
set xlabel 'β (early-stopping threshold factor)'
set ylabel 'cumulative ETA / cumulative ETA at β = 2'
set key outside right font ',9'
plot 'csv/fig12-beta.csv' skip 1 every ::0::7 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#1b9e77' title 'cifar100', 'csv/fig12-beta.csv' skip 1 every ::8::15 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#d95f02' title 'imagenet', 'csv/fig12-beta.csv' skip 1 every ::16::23 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#7570b3' title 'squad', 'csv/fig12-beta.csv' skip 1 every ::24::31 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#e7298a' title 'librispeech', 'csv/fig12-beta.csv' skip 1 every ::32::39 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#66a61e' title 'movielens-1m', 'csv/fig12-beta.csv' skip 1 every ::40::47 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#e6ab02' title 'sentiment140', 'csv/fig12-beta.csv' skip 1 every ::48::55 using 4:5 with linespoints pt 5 ps 1 lw 3 lc rgb 'black' title 'geometric mean', 1 with lines dt 2 lc rgb '#888888' notitle

unset multiplot
set terminal svg noenhanced size 1000,480 font 'sans,10' background '#ffffff'
set output 'figures/fig12-beta.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set title 'Figure 12: cumulative ETA across β, relative to β = 2 (per seed; mean and sd over seeds), V100'
set xlabel 'β (early-stopping threshold factor)'
set ylabel 'cumulative ETA / cumulative ETA at β = 2'
set key outside right font ',9'
plot 'csv/fig12-beta.csv' skip 1 every ::0::7 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#1b9e77' title 'cifar100', 'csv/fig12-beta.csv' skip 1 every ::8::15 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#d95f02' title 'imagenet', 'csv/fig12-beta.csv' skip 1 every ::16::23 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#7570b3' title 'squad', 'csv/fig12-beta.csv' skip 1 every ::24::31 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#e7298a' title 'librispeech', 'csv/fig12-beta.csv' skip 1 every ::32::39 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#66a61e' title 'movielens-1m', 'csv/fig12-beta.csv' skip 1 every ::40::47 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '#e6ab02' title 'sentiment140', 'csv/fig12-beta.csv' skip 1 every ::48::55 using 4:5 with linespoints pt 5 ps 1 lw 3 lc rgb 'black' title 'geometric mean', 1 with lines dt 2 lc rgb '#888888' notitle

unset multiplot
set output
