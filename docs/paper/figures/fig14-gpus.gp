# Draws figures/fig14-gpus.png and figures/fig14-gpus.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig14-gpus.gp
set encoding utf8
set terminal pngcairo noenhanced size 1200,460 font 'sans,10'
set output 'figures/fig14-gpus.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figures 14 and 23: Zeus per GPU generation (last 5 recurrences over that GPU''s expected Default; mean and sd over seeds)'
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:1.3]
set xtics rotate by -25 scale 0
set key top left horizontal font ',9'
set title 'ETA'
set ylabel 'ETA / Default'
plot 'csv/fig14-bars.csv' skip 1 using 3:4:xtic(2) title 'P100 (Pascal)' lc rgb '#fdd0a2', 'csv/fig14-bars.csv' skip 1 using 5:6 title 'V100 (Volta)' lc rgb '#2b8cbe', 'csv/fig14-bars.csv' skip 1 using 7:8 title 'RTX 6000 (Turing)' lc rgb '#74c476', 'csv/fig14-bars.csv' skip 1 using 9:10 title 'A40 (Ampere)' lc rgb '#756bb1', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'TTA'
set ylabel 'TTA / Default'
plot 'csv/fig14-bars.csv' skip 1 using 11:12:xtic(2) title 'P100 (Pascal)' lc rgb '#fdd0a2', 'csv/fig14-bars.csv' skip 1 using 13:14 title 'V100 (Volta)' lc rgb '#2b8cbe', 'csv/fig14-bars.csv' skip 1 using 15:16 title 'RTX 6000 (Turing)' lc rgb '#74c476', 'csv/fig14-bars.csv' skip 1 using 17:18 title 'A40 (Ampere)' lc rgb '#756bb1', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'

unset multiplot
set terminal svg noenhanced size 1200,460 font 'sans,10' background '#ffffff'
set output 'figures/fig14-gpus.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 1,2 title 'Figures 14 and 23: Zeus per GPU generation (last 5 recurrences over that GPU''s expected Default; mean and sd over seeds)'
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:1.3]
set xtics rotate by -25 scale 0
set key top left horizontal font ',9'
set title 'ETA'
set ylabel 'ETA / Default'
plot 'csv/fig14-bars.csv' skip 1 using 3:4:xtic(2) title 'P100 (Pascal)' lc rgb '#fdd0a2', 'csv/fig14-bars.csv' skip 1 using 5:6 title 'V100 (Volta)' lc rgb '#2b8cbe', 'csv/fig14-bars.csv' skip 1 using 7:8 title 'RTX 6000 (Turing)' lc rgb '#74c476', 'csv/fig14-bars.csv' skip 1 using 9:10 title 'A40 (Ampere)' lc rgb '#756bb1', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'TTA'
set ylabel 'TTA / Default'
plot 'csv/fig14-bars.csv' skip 1 using 11:12:xtic(2) title 'P100 (Pascal)' lc rgb '#fdd0a2', 'csv/fig14-bars.csv' skip 1 using 13:14 title 'V100 (Volta)' lc rgb '#2b8cbe', 'csv/fig14-bars.csv' skip 1 using 15:16 title 'RTX 6000 (Turing)' lc rgb '#74c476', 'csv/fig14-bars.csv' skip 1 using 17:18 title 'A40 (Ampere)' lc rgb '#756bb1', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'

unset multiplot
set output
