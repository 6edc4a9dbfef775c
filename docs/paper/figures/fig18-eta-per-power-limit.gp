# Draws figures/fig18-eta-per-power-limit.png and figures/fig18-eta-per-power-limit.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig18-eta-per-power-limit.gp
set encoding utf8
set terminal pngcairo noenhanced size 1350,800 font 'sans,10'
set output 'figures/fig18-eta-per-power-limit.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 18: ETA per power limit (V100)'
unset key
set origin 0.0000,0.4962
set size 0.3333,0.4612
set title 'cifar100 (b0 = 1024, energy-optimal 128)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::0::6 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::7::13 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0.3333,0.4962
set size 0.3333,0.4612
set title 'imagenet (b0 = 256, energy-optimal 360)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::14::20 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::21::27 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0.6667,0.4962
set size 0.3333,0.4612
set title 'squad (b0 = 32, energy-optimal 8)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::28::34 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::35::41 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0.0000,0.0350
set size 0.3333,0.4612
set title 'librispeech (b0 = 192, energy-optimal 32)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::42::48 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::49::55 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0.3333,0.0350
set size 0.3333,0.4612
set title 'movielens-1m (b0 = 1024, energy-optimal 16384)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::56::62 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::63::69 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0.6667,0.0350
set size 0.3333,0.4612
set title 'sentiment140 (b0 = 128, energy-optimal 32)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::70::76 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::77::83 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0,0
set size 1,0.0350
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0350
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
set key at screen 0.5,screen 0.0175 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'at b0', '+' using (NaN):(NaN) with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'at the energy-optimal batch size', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'default ETA'

unset multiplot
set terminal svg noenhanced size 1350,800 font 'sans,10' background '#ffffff'
set output 'figures/fig18-eta-per-power-limit.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 18: ETA per power limit (V100)'
unset key
set origin 0.0000,0.4962
set size 0.3333,0.4612
set title 'cifar100 (b0 = 1024, energy-optimal 128)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::0::6 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::7::13 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0.3333,0.4962
set size 0.3333,0.4612
set title 'imagenet (b0 = 256, energy-optimal 360)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::14::20 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::21::27 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0.6667,0.4962
set size 0.3333,0.4612
set title 'squad (b0 = 32, energy-optimal 8)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::28::34 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::35::41 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0.0000,0.0350
set size 0.3333,0.4612
set title 'librispeech (b0 = 192, energy-optimal 32)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::42::48 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::49::55 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0.3333,0.0350
set size 0.3333,0.4612
set title 'movielens-1m (b0 = 1024, energy-optimal 16384)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::56::62 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::63::69 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0.6667,0.0350
set size 0.3333,0.4612
set title 'sentiment140 (b0 = 128, energy-optimal 32)'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::70::76 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' notitle, '' skip 1 every ::77::83 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle
unset arrow
set origin 0,0
set size 1,0.0350
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0350
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
set key at screen 0.5,screen 0.0175 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'at b0', '+' using (NaN):(NaN) with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'at the energy-optimal batch size', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'default ETA'

unset multiplot
set output
