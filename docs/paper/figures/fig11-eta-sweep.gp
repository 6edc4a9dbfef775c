# Draws figures/fig11-eta-sweep.png and figures/fig11-eta-sweep.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig11-eta-sweep.gp
set encoding utf8
set terminal pngcairo noenhanced size 1000,700 font 'sans,10'
set output 'figures/fig11-eta-sweep.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set title 'Figure 11: η from 0 (time) to 1 (energy) moves the choice along the Pareto front, librispeech/deepspeech2 on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (MJ)'
set xrange [10.5527:18.1067]
set yrange [5.17861:8.85001]
set key outside below center horizontal Left reverse samplen 2 font ',9'
set arrow from 11.1081,graph 0 to 11.1081,graph 1 nohead dt 2 lw 1.2 lc rgb '#555555'
set label 'cost(η=0) = C*' at 11.1081,graph 0.95 offset 0.5,0 font ',8'
c1(x) = (8.64559e+06 - (1-0.5)*250*x*3600)/0.5/1e6
c2(x) = (5.45116e+06 - (1-1)*250*x*3600)/1/1e6
plot 'csv/fig02-configurations.csv' skip 1 every ::154::258 using ($8==1 ? $11/3600 : 1/0):($10/1e6) with points pt 7 ps 0.5 lc rgb '#c6dbef' title 'configuration', 'csv/fig02-front.csv' skip 1 every ::20::28 using ($7/3600):($6/1e6) with lines lw 2 lc rgb '#fc9272' title 'Pareto front', 'csv/fig11-eta-sweep.csv' skip 1 using ($5/3600):($4/1e6) with lines lw 1.5 lc rgb '#d7301f' notitle, 'csv/fig11-eta-sweep.csv' skip 1 every ::0::4 using ($5/3600):($4/1e6) with points pt 5 ps 1.6 lc rgb '#d7301f' title 'optimum for η = 0–0.4: 48 @ 250 W', 'csv/fig11-eta-sweep.csv' skip 1 every ::5::8 using ($5/3600):($4/1e6) with points pt 7 ps 1.6 lc rgb '#d7301f' title 'optimum for η = 0.5–0.8: 48 @ 150 W', 'csv/fig11-eta-sweep.csv' skip 1 every ::9::9 using ($5/3600):($4/1e6) with points pt 9 ps 1.6 lc rgb '#d7301f' title 'optimum for η = 0.9: 32 @ 125 W', 'csv/fig11-eta-sweep.csv' skip 1 every ::10::10 using ($5/3600):($4/1e6) with points pt 11 ps 1.6 lc rgb '#d7301f' title 'optimum for η = 1: 32 @ 100 W', '' skip 1 using ($9/3600):($7/1e6):($10/3600):($8/1e6) with xyerrorbars pt 7 ps 0.9 lc rgb '#2b8cbe' title 'Zeus (last 5 recurrences, mean ± sd)', c1(x) with lines dt 3 lw 1.2 lc rgb '#555555' title 'constant cost at η = 0.5 (through its optimum)', c2(x) with lines dt 4 lw 1.2 lc rgb '#555555' title 'constant cost at η = 1 (through its optimum)'

unset multiplot
set terminal svg noenhanced size 1000,700 font 'sans,10' background '#ffffff'
set output 'figures/fig11-eta-sweep.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set title 'Figure 11: η from 0 (time) to 1 (energy) moves the choice along the Pareto front, librispeech/deepspeech2 on v100'
set xlabel 'TTA (h)'
set ylabel 'ETA (MJ)'
set xrange [10.5527:18.1067]
set yrange [5.17861:8.85001]
set key outside below center horizontal Left reverse samplen 2 font ',9'
set arrow from 11.1081,graph 0 to 11.1081,graph 1 nohead dt 2 lw 1.2 lc rgb '#555555'
set label 'cost(η=0) = C*' at 11.1081,graph 0.95 offset 0.5,0 font ',8'
c1(x) = (8.64559e+06 - (1-0.5)*250*x*3600)/0.5/1e6
c2(x) = (5.45116e+06 - (1-1)*250*x*3600)/1/1e6
plot 'csv/fig02-configurations.csv' skip 1 every ::154::258 using ($8==1 ? $11/3600 : 1/0):($10/1e6) with points pt 7 ps 0.5 lc rgb '#c6dbef' title 'configuration', 'csv/fig02-front.csv' skip 1 every ::20::28 using ($7/3600):($6/1e6) with lines lw 2 lc rgb '#fc9272' title 'Pareto front', 'csv/fig11-eta-sweep.csv' skip 1 using ($5/3600):($4/1e6) with lines lw 1.5 lc rgb '#d7301f' notitle, 'csv/fig11-eta-sweep.csv' skip 1 every ::0::4 using ($5/3600):($4/1e6) with points pt 5 ps 1.6 lc rgb '#d7301f' title 'optimum for η = 0–0.4: 48 @ 250 W', 'csv/fig11-eta-sweep.csv' skip 1 every ::5::8 using ($5/3600):($4/1e6) with points pt 7 ps 1.6 lc rgb '#d7301f' title 'optimum for η = 0.5–0.8: 48 @ 150 W', 'csv/fig11-eta-sweep.csv' skip 1 every ::9::9 using ($5/3600):($4/1e6) with points pt 9 ps 1.6 lc rgb '#d7301f' title 'optimum for η = 0.9: 32 @ 125 W', 'csv/fig11-eta-sweep.csv' skip 1 every ::10::10 using ($5/3600):($4/1e6) with points pt 11 ps 1.6 lc rgb '#d7301f' title 'optimum for η = 1: 32 @ 100 W', '' skip 1 using ($9/3600):($7/1e6):($10/3600):($8/1e6) with xyerrorbars pt 7 ps 0.9 lc rgb '#2b8cbe' title 'Zeus (last 5 recurrences, mean ± sd)', c1(x) with lines dt 3 lw 1.2 lc rgb '#555555' title 'constant cost at η = 0.5 (through its optimum)', c2(x) with lines dt 4 lw 1.2 lc rgb '#555555' title 'constant cost at η = 1 (through its optimum)'

unset multiplot
set output
