# Draws figures/fig02-pareto.png and figures/fig02-pareto.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig02-pareto.gp
set encoding utf8
set terminal pngcairo noenhanced size 900,560 font 'sans,10'
set output 'figures/fig02-pareto.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set title 'librispeech/deepspeech2 on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (MJ)'
set key top left Left reverse samplen 2 font ',9'
plot 'csv/fig02-configurations.csv' skip 1 every ::154::258 using ($8==1 ? $11/3600 : 1/0):($10/1000000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::20::28 using ($7/3600):($6/1000000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 89.4456*x*0.0036 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 89.4456), 204.586*x*0.0036 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 204.586), 'csv/fig02-configurations.csv' skip 1 every ::154::258 using (($3==192 && $4==250) ? $11/3600 : 1/0):($10/1000000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'

unset multiplot
set terminal svg noenhanced size 900,560 font 'sans,10' background '#ffffff'
set output 'figures/fig02-pareto.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set title 'librispeech/deepspeech2 on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (MJ)'
set key top left Left reverse samplen 2 font ',9'
plot 'csv/fig02-configurations.csv' skip 1 every ::154::258 using ($8==1 ? $11/3600 : 1/0):($10/1000000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::20::28 using ($7/3600):($6/1000000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 89.4456*x*0.0036 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 89.4456), 204.586*x*0.0036 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 204.586), 'csv/fig02-configurations.csv' skip 1 every ::154::258 using (($3==192 && $4==250) ? $11/3600 : 1/0):($10/1000000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'

unset multiplot
set output
