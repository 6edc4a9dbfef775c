# Draws figures/fig17-eta-per-batch-size.png and figures/fig17-eta-per-batch-size.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig17-eta-per-batch-size.gp
set encoding utf8
set terminal pngcairo noenhanced size 1350,800 font 'sans,10'
set output 'figures/fig17-eta-per-batch-size.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 17: ETA per batch size at the maximum power limit (V100)'
unset key
set origin 0.0000,0.4962
set size 0.3333,0.4612
set title 'cifar100/shufflenetv2'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::0::7 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::0::7 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
unset arrow
set origin 0.3333,0.4962
set size 0.3333,0.4612
set title 'imagenet/resnet50'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::8::11 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::8::11 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
unset arrow
set origin 0.6667,0.4962
set size 0.3333,0.4612
set title 'squad/bert_base_uncased'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::12::18 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::12::18 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
unset arrow
set origin 0.0000,0.0350
set size 0.3333,0.4612
set title 'librispeech/deepspeech2'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::19::33 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::19::33 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
unset arrow
set origin 0.3333,0.0350
set size 0.3333,0.4612
set title 'movielens-1m/ncf'
set logscale x 2
set logscale y 10
set xlabel 'batch size'
set ylabel 'ETA / default ETA (log scale)'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::34::43 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::34::43 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
unset arrow
set origin 0.6667,0.0350
set size 0.3333,0.4612
set title 'sentiment140/bert_base_uncased'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::44::48 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::44::48 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
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
plot '+' using (NaN):(NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max limit (bars: fastest/slowest run)', '+' using (NaN):(NaN) with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'default ETA'

unset multiplot
set terminal svg noenhanced size 1350,800 font 'sans,10' background '#ffffff'
set output 'figures/fig17-eta-per-batch-size.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 17: ETA per batch size at the maximum power limit (V100)'
unset key
set origin 0.0000,0.4962
set size 0.3333,0.4612
set title 'cifar100/shufflenetv2'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::0::7 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::0::7 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
unset arrow
set origin 0.3333,0.4962
set size 0.3333,0.4612
set title 'imagenet/resnet50'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::8::11 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::8::11 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
unset arrow
set origin 0.6667,0.4962
set size 0.3333,0.4612
set title 'squad/bert_base_uncased'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::12::18 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::12::18 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
unset arrow
set origin 0.0000,0.0350
set size 0.3333,0.4612
set title 'librispeech/deepspeech2'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::19::33 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::19::33 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
unset arrow
set origin 0.3333,0.0350
set size 0.3333,0.4612
set title 'movielens-1m/ncf'
set logscale x 2
set logscale y 10
set xlabel 'batch size'
set ylabel 'ETA / default ETA (log scale)'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::34::43 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::34::43 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
unset arrow
set origin 0.6667,0.0350
set size 0.3333,0.4612
set title 'sentiment140/bert_base_uncased'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::44::48 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' notitle, '' skip 1 every ::44::48 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' notitle
unset logscale
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
plot '+' using (NaN):(NaN):(NaN):(NaN) with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max limit (bars: fastest/slowest run)', '+' using (NaN):(NaN) with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'default ETA'

unset multiplot
set output
