# Draws figures/fig05-eta-per-knob.png and figures/fig05-eta-per-knob.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig05-eta-per-knob.gp
set encoding utf8
set terminal pngcairo noenhanced size 1100,440 font 'sans,10'
set output 'figures/fig05-eta-per-knob.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figure 5: ETA per batch size and per power limit, DeepSpeech2 on V100'
set key top left font ',9'
set title 'librispeech/deepspeech2'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::19::33 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::19::33 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'librispeech/deepspeech2'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::42::48 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 192', '' skip 1 every ::49::55 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'

unset multiplot
set terminal svg noenhanced size 1100,440 font 'sans,10' background '#ffffff'
set output 'figures/fig05-eta-per-knob.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figure 5: ETA per batch size and per power limit, DeepSpeech2 on V100'
set key top left font ',9'
set title 'librispeech/deepspeech2'
set logscale x 2
set xlabel 'batch size'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-batch-size.csv' skip 1 every ::19::33 using 3:11:12:13 with yerrorlines pt 7 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'max power limit (bars: fastest and slowest run)', '' skip 1 every ::19::33 using ($7==0 ? $3 : 1/0):11 with points pt 6 ps 2 lc rgb 'black' title 'some runs miss the target', 1 with lines dt 2 lc rgb 'black' title 'default'
unset logscale x
set title 'librispeech/deepspeech2'
set xlabel 'power limit (W)'
set ylabel 'ETA / default ETA'
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
plot 'csv/fig05-eta-per-power-limit.csv' skip 1 every ::42::48 using 5:8 with linespoints pt 7 ps 0.8 lw 1.5 lc rgb '#e6550d' title 'b0 = 192', '' skip 1 every ::49::55 using 5:8 with linespoints pt 5 ps 0.8 lw 1.5 lc rgb '#2b8cbe' title 'energy-optimal batch size', 1 with lines dt 2 lc rgb 'black' title 'default'

unset multiplot
set output
