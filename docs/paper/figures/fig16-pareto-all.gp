# Draws figures/fig16-pareto-all.png and figures/fig16-pareto-all.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig16-pareto-all.gp
set encoding utf8
set terminal pngcairo noenhanced size 1350,780 font 'sans,10'
set output 'figures/fig16-pareto-all.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 2,3 title 'Figure 16: ETA vs TTA of every configuration and the Pareto front (V100)'
set title 'cifar100/shufflenetv2 on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (kJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::0::69 using ($8==1 ? $11/3600 : 1/0):($10/1000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::0::5 using ($7/3600):($6/1000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 38.9882*x*3.6 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 38.9882), 195.883*x*3.6 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 195.883), 'csv/fig02-configurations.csv' skip 1 every ::0::69 using (($3==1024 && $4==250) ? $11/3600 : 1/0):($10/1000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'
set title 'imagenet/resnet50 on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (MJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::70::104 using ($8==1 ? $11/3600 : 1/0):($10/1000000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::6::10 using ($7/3600):($6/1000000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 98.3824*x*0.0036 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 98.3824), 222.439*x*0.0036 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 222.439), 'csv/fig02-configurations.csv' skip 1 every ::70::104 using (($3==256 && $4==250) ? $11/3600 : 1/0):($10/1000000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'
set title 'squad/bert_base_uncased on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (kJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::105::153 using ($8==1 ? $11/3600 : 1/0):($10/1000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::11::19 using ($7/3600):($6/1000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 99.4766*x*3.6 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 99.4766), 228.352*x*3.6 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 228.352), 'csv/fig02-configurations.csv' skip 1 every ::105::153 using (($3==32 && $4==250) ? $11/3600 : 1/0):($10/1000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'
set title 'librispeech/deepspeech2 on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (MJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::154::258 using ($8==1 ? $11/3600 : 1/0):($10/1000000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::20::28 using ($7/3600):($6/1000000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 89.4456*x*0.0036 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 89.4456), 204.586*x*0.0036 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 204.586), 'csv/fig02-configurations.csv' skip 1 every ::154::258 using (($3==192 && $4==250) ? $11/3600 : 1/0):($10/1000000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'
set title 'movielens-1m/ncf on v100'
set xlabel 'TTA (min)'
set ylabel 'ETA (kJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::259::349 using ($8==1 ? $11/60 : 1/0):($10/1000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::29::31 using ($7/60):($6/1000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 34.7516*x*0.06 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 34.7516), 40.1089*x*0.06 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 40.1089), 'csv/fig02-configurations.csv' skip 1 every ::259::349 using (($3==1024 && $4==250) ? $11/60 : 1/0):($10/1000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'
set title 'sentiment140/bert_base_uncased on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (MJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::350::384 using ($8==1 ? $11/3600 : 1/0):($10/1000000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::32::37 using ($7/3600):($6/1000000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 97.9524*x*0.0036 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 97.9524), 225.941*x*0.0036 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 225.941), 'csv/fig02-configurations.csv' skip 1 every ::350::384 using (($3==128 && $4==250) ? $11/3600 : 1/0):($10/1000000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'

unset multiplot
set terminal svg noenhanced size 1350,780 font 'sans,10' background '#ffffff'
set output 'figures/fig16-pareto-all.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 2,3 title 'Figure 16: ETA vs TTA of every configuration and the Pareto front (V100)'
set title 'cifar100/shufflenetv2 on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (kJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::0::69 using ($8==1 ? $11/3600 : 1/0):($10/1000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::0::5 using ($7/3600):($6/1000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 38.9882*x*3.6 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 38.9882), 195.883*x*3.6 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 195.883), 'csv/fig02-configurations.csv' skip 1 every ::0::69 using (($3==1024 && $4==250) ? $11/3600 : 1/0):($10/1000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'
set title 'imagenet/resnet50 on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (MJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::70::104 using ($8==1 ? $11/3600 : 1/0):($10/1000000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::6::10 using ($7/3600):($6/1000000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 98.3824*x*0.0036 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 98.3824), 222.439*x*0.0036 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 222.439), 'csv/fig02-configurations.csv' skip 1 every ::70::104 using (($3==256 && $4==250) ? $11/3600 : 1/0):($10/1000000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'
set title 'squad/bert_base_uncased on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (kJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::105::153 using ($8==1 ? $11/3600 : 1/0):($10/1000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::11::19 using ($7/3600):($6/1000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 99.4766*x*3.6 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 99.4766), 228.352*x*3.6 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 228.352), 'csv/fig02-configurations.csv' skip 1 every ::105::153 using (($3==32 && $4==250) ? $11/3600 : 1/0):($10/1000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'
set title 'librispeech/deepspeech2 on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (MJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::154::258 using ($8==1 ? $11/3600 : 1/0):($10/1000000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::20::28 using ($7/3600):($6/1000000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 89.4456*x*0.0036 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 89.4456), 204.586*x*0.0036 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 204.586), 'csv/fig02-configurations.csv' skip 1 every ::154::258 using (($3==192 && $4==250) ? $11/3600 : 1/0):($10/1000000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'
set title 'movielens-1m/ncf on v100'
set xlabel 'TTA (min)'
set ylabel 'ETA (kJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::259::349 using ($8==1 ? $11/60 : 1/0):($10/1000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::29::31 using ($7/60):($6/1000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 34.7516*x*0.06 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 34.7516), 40.1089*x*0.06 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 40.1089), 'csv/fig02-configurations.csv' skip 1 every ::259::349 using (($3==1024 && $4==250) ? $11/60 : 1/0):($10/1000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'
set title 'sentiment140/bert_base_uncased on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (MJ)'
unset key
plot 'csv/fig02-configurations.csv' skip 1 every ::350::384 using ($8==1 ? $11/3600 : 1/0):($10/1000000) with points pt 7 ps 0.55 lc rgb '#9ecae1' title 'configuration (all runs reach the target)', 'csv/fig02-front.csv' skip 1 every ::32::37 using ($7/3600):($6/1000000) with linespoints pt 7 ps 0.8 lw 2 lc rgb '#d7301f' title 'Pareto front', 97.9524*x*0.0036 with lines dt 2 lw 1.2 lc rgb '#31a354' title sprintf('ETA = %.0f W x TTA (least average power)', 97.9524), 225.941*x*0.0036 with lines dt 3 lw 1.2 lc rgb '#756bb1' title sprintf('ETA = %.0f W x TTA (largest average power)', 225.941), 'csv/fig02-configurations.csv' skip 1 every ::350::384 using (($3==128 && $4==250) ? $11/3600 : 1/0):($10/1000000) with points pt 3 ps 2 lw 2 lc rgb 'black' title 'default (b0, max power limit)'

unset multiplot
set output
