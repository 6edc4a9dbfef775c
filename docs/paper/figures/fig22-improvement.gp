# Draws figures/fig22-improvement.png and figures/fig22-improvement.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig22-improvement.gp
set encoding utf8
set terminal pngcairo noenhanced size 1100,440 font 'sans,10'
set output 'figures/fig22-improvement.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figure 22: improvement over Default across η (Default / Zeus, last 5 recurrences; mean and sd over seeds)'
set xlabel 'η'
set xrange [-0.05:1.05]
set key top left font ',8'
set title 'energy'
set ylabel 'energy improvement (×)'
plot 'csv/fig22-improvement.csv' skip 1 every ::0::10 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#1b9e77' title 'cifar100', 'csv/fig22-improvement.csv' skip 1 every ::11::21 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#d95f02' title 'imagenet', 'csv/fig22-improvement.csv' skip 1 every ::22::32 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#7570b3' title 'squad', 'csv/fig22-improvement.csv' skip 1 every ::33::43 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e7298a' title 'librispeech', 'csv/fig22-improvement.csv' skip 1 every ::44::54 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#66a61e' title 'movielens-1m', 'csv/fig22-improvement.csv' skip 1 every ::55::65 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e6ab02' title 'sentiment140', 1 with lines dt 2 lc rgb 'black' title 'Default'
set title 'time'
set ylabel 'time improvement (×)'
plot 'csv/fig22-improvement.csv' skip 1 every ::0::10 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#1b9e77' title 'cifar100', 'csv/fig22-improvement.csv' skip 1 every ::11::21 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#d95f02' title 'imagenet', 'csv/fig22-improvement.csv' skip 1 every ::22::32 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#7570b3' title 'squad', 'csv/fig22-improvement.csv' skip 1 every ::33::43 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e7298a' title 'librispeech', 'csv/fig22-improvement.csv' skip 1 every ::44::54 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#66a61e' title 'movielens-1m', 'csv/fig22-improvement.csv' skip 1 every ::55::65 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e6ab02' title 'sentiment140', 1 with lines dt 2 lc rgb 'black' title 'Default'

unset multiplot
set terminal svg noenhanced size 1100,440 font 'sans,10' background '#ffffff'
set output 'figures/fig22-improvement.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figure 22: improvement over Default across η (Default / Zeus, last 5 recurrences; mean and sd over seeds)'
set xlabel 'η'
set xrange [-0.05:1.05]
set key top left font ',8'
set title 'energy'
set ylabel 'energy improvement (×)'
plot 'csv/fig22-improvement.csv' skip 1 every ::0::10 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#1b9e77' title 'cifar100', 'csv/fig22-improvement.csv' skip 1 every ::11::21 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#d95f02' title 'imagenet', 'csv/fig22-improvement.csv' skip 1 every ::22::32 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#7570b3' title 'squad', 'csv/fig22-improvement.csv' skip 1 every ::33::43 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e7298a' title 'librispeech', 'csv/fig22-improvement.csv' skip 1 every ::44::54 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#66a61e' title 'movielens-1m', 'csv/fig22-improvement.csv' skip 1 every ::55::65 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e6ab02' title 'sentiment140', 1 with lines dt 2 lc rgb 'black' title 'Default'
set title 'time'
set ylabel 'time improvement (×)'
plot 'csv/fig22-improvement.csv' skip 1 every ::0::10 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#1b9e77' title 'cifar100', 'csv/fig22-improvement.csv' skip 1 every ::11::21 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#d95f02' title 'imagenet', 'csv/fig22-improvement.csv' skip 1 every ::22::32 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#7570b3' title 'squad', 'csv/fig22-improvement.csv' skip 1 every ::33::43 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e7298a' title 'librispeech', 'csv/fig22-improvement.csv' skip 1 every ::44::54 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#66a61e' title 'movielens-1m', 'csv/fig22-improvement.csv' skip 1 every ::55::65 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e6ab02' title 'sentiment140', 1 with lines dt 2 lc rgb 'black' title 'Default'

unset multiplot
set output
