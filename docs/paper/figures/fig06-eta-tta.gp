# Draws figures/fig06-eta-tta.png and figures/fig06-eta-tta.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig06-eta-tta.gp
set encoding utf8
set terminal pngcairo noenhanced size 1200,1320 font 'sans,10'
set output 'figures/fig06-eta-tta.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 4,2 title 'Figures 6 and 19: ETA and TTA of the last 5 recurrences over the expected Default (mean and sd over seeds; lower is better)'
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:1.4]
set xtics rotate by -25 scale 0 font ',8'
set key top left horizontal font ',8'
set bars front
set title 'V100 (Volta): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::0::5 using 4:5:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::0::5 using 6:7 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::0::5 using 8:9 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'V100 (Volta): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::0::5 using 10:11:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::0::5 using 12:13 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::0::5 using 14:15 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'A40 (Ampere): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::6::11 using 4:5:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::6::11 using 6:7 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::6::11 using 8:9 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'A40 (Ampere): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::6::11 using 10:11:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::6::11 using 12:13 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::6::11 using 14:15 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'P100 (Pascal): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::12::17 using 4:5:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::12::17 using 6:7 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::12::17 using 8:9 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'P100 (Pascal): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::12::17 using 10:11:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::12::17 using 12:13 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::12::17 using 14:15 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'RTX 6000 (Turing): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::18::23 using 4:5:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::18::23 using 6:7 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::18::23 using 8:9 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'RTX 6000 (Turing): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::18::23 using 10:11:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::18::23 using 12:13 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::18::23 using 14:15 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'

unset multiplot
set terminal svg noenhanced size 1200,1320 font 'sans,10' background '#ffffff'
set output 'figures/fig06-eta-tta.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 4,2 title 'Figures 6 and 19: ETA and TTA of the last 5 recurrences over the expected Default (mean and sd over seeds; lower is better)'
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:1.4]
set xtics rotate by -25 scale 0 font ',8'
set key top left horizontal font ',8'
set bars front
set title 'V100 (Volta): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::0::5 using 4:5:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::0::5 using 6:7 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::0::5 using 8:9 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'V100 (Volta): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::0::5 using 10:11:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::0::5 using 12:13 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::0::5 using 14:15 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'A40 (Ampere): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::6::11 using 4:5:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::6::11 using 6:7 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::6::11 using 8:9 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'A40 (Ampere): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::6::11 using 10:11:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::6::11 using 12:13 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::6::11 using 14:15 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'P100 (Pascal): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::12::17 using 4:5:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::12::17 using 6:7 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::12::17 using 8:9 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'P100 (Pascal): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::12::17 using 10:11:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::12::17 using 12:13 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::12::17 using 14:15 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'RTX 6000 (Turing): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::18::23 using 4:5:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::18::23 using 6:7 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::18::23 using 8:9 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'
set title 'RTX 6000 (Turing): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::18::23 using 10:11:xtic(3) title 'Zeus' lc rgb '#2b8cbe', '' skip 1 every ::18::23 using 12:13 title 'Grid Search' lc rgb '#e6550d', '' skip 1 every ::18::23 using 14:15 title 'Directional Grid Search' lc rgb '#31a354', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'Default'

unset multiplot
set output
