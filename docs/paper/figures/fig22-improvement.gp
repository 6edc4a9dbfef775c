# Draws figures/fig22-improvement.png and figures/fig22-improvement.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig22-improvement.gp
set encoding utf8
set terminal pngcairo noenhanced size 1100,480 font 'sans,10'
set output 'figures/fig22-improvement.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 22: improvement over Default across η (Default / Zeus, last 5 recurrences; mean and sd over seeds)'
unset key
set xlabel 'η'
set xrange [-0.05:1.05]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
set origin 0.0000,0.0583
set size 0.5000,0.8708
set title 'energy'
set ylabel 'energy improvement (×)'
plot 'csv/fig22-improvement.csv' skip 1 every ::0::10 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#1b9e77' notitle, 'csv/fig22-improvement.csv' skip 1 every ::11::21 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#d95f02' notitle, 'csv/fig22-improvement.csv' skip 1 every ::22::32 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#7570b3' notitle, 'csv/fig22-improvement.csv' skip 1 every ::33::43 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e7298a' notitle, 'csv/fig22-improvement.csv' skip 1 every ::44::54 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#66a61e' notitle, 'csv/fig22-improvement.csv' skip 1 every ::55::65 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e6ab02' notitle
set origin 0.5000,0.0583
set size 0.5000,0.8708
set title 'time'
set ylabel 'time improvement (×)'
plot 'csv/fig22-improvement.csv' skip 1 every ::0::10 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#1b9e77' notitle, 'csv/fig22-improvement.csv' skip 1 every ::11::21 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#d95f02' notitle, 'csv/fig22-improvement.csv' skip 1 every ::22::32 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#7570b3' notitle, 'csv/fig22-improvement.csv' skip 1 every ::33::43 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e7298a' notitle, 'csv/fig22-improvement.csv' skip 1 every ::44::54 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#66a61e' notitle, 'csv/fig22-improvement.csv' skip 1 every ::55::65 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e6ab02' notitle
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
plot '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#1b9e77' title 'cifar100', '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#d95f02' title 'imagenet', '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#7570b3' title 'squad', '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e7298a' title 'librispeech', '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#66a61e' title 'movielens-1m', '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e6ab02' title 'sentiment140', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'Default (= 1)'

unset multiplot
set terminal svg noenhanced size 1100,480 font 'sans,10' background '#ffffff'
set output 'figures/fig22-improvement.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 22: improvement over Default across η (Default / Zeus, last 5 recurrences; mean and sd over seeds)'
unset key
set xlabel 'η'
set xrange [-0.05:1.05]
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
set origin 0.0000,0.0583
set size 0.5000,0.8708
set title 'energy'
set ylabel 'energy improvement (×)'
plot 'csv/fig22-improvement.csv' skip 1 every ::0::10 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#1b9e77' notitle, 'csv/fig22-improvement.csv' skip 1 every ::11::21 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#d95f02' notitle, 'csv/fig22-improvement.csv' skip 1 every ::22::32 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#7570b3' notitle, 'csv/fig22-improvement.csv' skip 1 every ::33::43 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e7298a' notitle, 'csv/fig22-improvement.csv' skip 1 every ::44::54 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#66a61e' notitle, 'csv/fig22-improvement.csv' skip 1 every ::55::65 using 4:5:6 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e6ab02' notitle
set origin 0.5000,0.0583
set size 0.5000,0.8708
set title 'time'
set ylabel 'time improvement (×)'
plot 'csv/fig22-improvement.csv' skip 1 every ::0::10 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#1b9e77' notitle, 'csv/fig22-improvement.csv' skip 1 every ::11::21 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#d95f02' notitle, 'csv/fig22-improvement.csv' skip 1 every ::22::32 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#7570b3' notitle, 'csv/fig22-improvement.csv' skip 1 every ::33::43 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e7298a' notitle, 'csv/fig22-improvement.csv' skip 1 every ::44::54 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#66a61e' notitle, 'csv/fig22-improvement.csv' skip 1 every ::55::65 using 4:7:8 with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e6ab02' notitle
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
plot '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#1b9e77' title 'cifar100', '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#d95f02' title 'imagenet', '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#7570b3' title 'squad', '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e7298a' title 'librispeech', '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#66a61e' title 'movielens-1m', '+' using (NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.6 lw 1.5 lc rgb '#e6ab02' title 'sentiment140', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'Default (= 1)'

unset multiplot
set output
