# Draws figures/fig18-eta-per-power-limit.png and figures/fig18-eta-per-power-limit.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig18-eta-per-power-limit.gp
set encoding utf8
set terminal pngcairo noenhanced size 1350,780 font 'sans,10'
set output 'figures/fig18-eta-per-power-limit.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 2,3 title 'Figure 18: ETA per power limit (V100)'
set key top right font ',8'
set title 'cifar100/shufflenetv2'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::0::6 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 1024', '' skip 1 every ::7::13 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'
set title 'imagenet/resnet50'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::14::20 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 256', '' skip 1 every ::21::27 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'
set title 'squad/bert_base_uncased'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::28::34 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 32', '' skip 1 every ::35::41 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'
set title 'librispeech/deepspeech2'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::42::48 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 192', '' skip 1 every ::49::55 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'
set title 'movielens-1m/ncf'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::56::62 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 1024', '' skip 1 every ::63::69 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'
set title 'sentiment140/bert_base_uncased'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::70::76 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 128', '' skip 1 every ::77::83 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'

unset multiplot
set terminal svg noenhanced size 1350,780 font 'sans,10' background '#ffffff'
set output 'figures/fig18-eta-per-power-limit.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 2,3 title 'Figure 18: ETA per power limit (V100)'
set key top right font ',8'
set title 'cifar100/shufflenetv2'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::0::6 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 1024', '' skip 1 every ::7::13 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'
set title 'imagenet/resnet50'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::14::20 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 256', '' skip 1 every ::21::27 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'
set title 'squad/bert_base_uncased'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::28::34 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 32', '' skip 1 every ::35::41 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'
set title 'librispeech/deepspeech2'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::42::48 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 192', '' skip 1 every ::49::55 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'
set title 'movielens-1m/ncf'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::56::62 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 1024', '' skip 1 every ::63::69 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'
set title 'sentiment140/bert_base_uncased'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::70::76 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 128', '' skip 1 every ::77::83 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'

unset multiplot
set output
