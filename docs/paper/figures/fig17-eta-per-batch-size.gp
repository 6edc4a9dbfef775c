# Draws figures/fig17-eta-per-batch-size.png and figures/fig17-eta-per-batch-size.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig17-eta-per-batch-size.gp
set encoding utf8
set terminal pngcairo noenhanced size 1350,780 font 'sans,10'
set output 'figures/fig17-eta-per-batch-size.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 2,3 title 'Figure 17: ETA per batch size at the maximum power limit (V100)'
set key top left font ',8'
set title 'cifar100/shufflenetv2'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::0::7 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::0::7 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'imagenet/resnet50'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::8::11 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::8::11 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'squad/bert_base_uncased'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::12::18 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::12::18 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'librispeech/deepspeech2'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::19::33 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::19::33 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'movielens-1m/ncf'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::34::43 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::34::43 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'sentiment140/bert_base_uncased'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::44::48 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::44::48 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x

unset multiplot
set terminal svg noenhanced size 1350,780 font 'sans,10' background '#ffffff'
set output 'figures/fig17-eta-per-batch-size.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 2,3 title 'Figure 17: ETA per batch size at the maximum power limit (V100)'
set key top left font ',8'
set title 'cifar100/shufflenetv2'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::0::7 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::0::7 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'imagenet/resnet50'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::8::11 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::8::11 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'squad/bert_base_uncased'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::12::18 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::12::18 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'librispeech/deepspeech2'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::19::33 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::19::33 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'movielens-1m/ncf'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::34::43 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::34::43 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'sentiment140/bert_base_uncased'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::44::48 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::44::48 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x

unset multiplot
set output
