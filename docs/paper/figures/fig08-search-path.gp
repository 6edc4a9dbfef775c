# Draws figures/fig08-search-path.png and figures/fig08-search-path.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig08-search-path.gp
set encoding utf8
set terminal pngcairo noenhanced size 1000,520 font 'sans,10'
set output 'figures/fig08-search-path.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figure 8: Zeus search path, librispeech/deepspeech2 on v100, seed 1 (optimum 48 @ 150 W)'
set title 'configuration of every run'
set xlabel 'batch size'
set ylabel 'power limit (W)'
set logscale x 2
set cblabel 'run'
set palette defined (0 '#fee8c8', 0.5 '#e34a33', 1 '#2b0000')
set key bottom right font ',9'
set offsets graph 0.08, graph 0.08, graph 0.1, graph 0.1
plot 'csv/fig08-search-path.csv' skip 1 using 3:4 with lines lc rgb '#cccccc' notitle, '' skip 1 using 3:4:1 with points pt 7 ps 1.2 palette notitle, '' skip 1 using ($8==0 ? $3 : 1/0):4 with points pt 6 ps 2 lc rgb 'black' title 'did not reach the target'
unset logscale x
unset colorbox
unset offsets
set xrange [0:*]
set offsets 0, 0, graph 0.06, graph 0.06
set title 'batch size over runs'
set xlabel 'run'
set ylabel 'batch size'
set logscale y 2
set key top right
plot '' skip 1 using 1:3 with steps lc rgb '#2b8cbe' lw 1.5 title 'Zeus', 48 with lines dt 2 lc rgb 'black' title 'optimal batch size'

unset multiplot
set terminal svg noenhanced size 1000,520 font 'sans,10' background '#ffffff'
set output 'figures/fig08-search-path.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figure 8: Zeus search path, librispeech/deepspeech2 on v100, seed 1 (optimum 48 @ 150 W)'
set title 'configuration of every run'
set xlabel 'batch size'
set ylabel 'power limit (W)'
set logscale x 2
set cblabel 'run'
set palette defined (0 '#fee8c8', 0.5 '#e34a33', 1 '#2b0000')
set key bottom right font ',9'
set offsets graph 0.08, graph 0.08, graph 0.1, graph 0.1
plot 'csv/fig08-search-path.csv' skip 1 using 3:4 with lines lc rgb '#cccccc' notitle, '' skip 1 using 3:4:1 with points pt 7 ps 1.2 palette notitle, '' skip 1 using ($8==0 ? $3 : 1/0):4 with points pt 6 ps 2 lc rgb 'black' title 'did not reach the target'
unset logscale x
unset colorbox
unset offsets
set xrange [0:*]
set offsets 0, 0, graph 0.06, graph 0.06
set title 'batch size over runs'
set xlabel 'run'
set ylabel 'batch size'
set logscale y 2
set key top right
plot '' skip 1 using 1:3 with steps lc rgb '#2b8cbe' lw 1.5 title 'Zeus', 48 with lines dt 2 lc rgb 'black' title 'optimal batch size'

unset multiplot
set output
