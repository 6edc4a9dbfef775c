# Draws figures/fig06-eta-tta.png and figures/fig06-eta-tta.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig06-eta-tta.gp
set encoding utf8
set terminal pngcairo noenhanced size 1200,1400 font 'sans,10'
set output 'figures/fig06-eta-tta.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figures 6 and 19: ETA and TTA of the last 5 recurrences over the expected Default (mean and sd over seeds; lower is better)'
unset key
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:1.4]
set xtics rotate by 25 right scale 0 font ',8'
set bars front
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
set origin 0.0000,0.7368
set size 0.5000,0.2389
set title 'V100 (Volta): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::0::5 using 4:5:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::0::5 using 6:7 notitle lc rgb '#e6550d', '' skip 1 every ::0::5 using 8:9 notitle lc rgb '#31a354'
set origin 0.5000,0.7368
set size 0.5000,0.2389
set title 'V100 (Volta): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::0::5 using 10:11:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::0::5 using 12:13 notitle lc rgb '#e6550d', '' skip 1 every ::0::5 using 14:15 notitle lc rgb '#31a354'
set origin 0.0000,0.4979
set size 0.5000,0.2389
set title 'A40 (Ampere): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::6::11 using 4:5:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::6::11 using 6:7 notitle lc rgb '#e6550d', '' skip 1 every ::6::11 using 8:9 notitle lc rgb '#31a354'
set origin 0.5000,0.4979
set size 0.5000,0.2389
set title 'A40 (Ampere): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::6::11 using 10:11:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::6::11 using 12:13 notitle lc rgb '#e6550d', '' skip 1 every ::6::11 using 14:15 notitle lc rgb '#31a354'
set origin 0.0000,0.2589
set size 0.5000,0.2389
set title 'P100 (Pascal): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::12::17 using 4:5:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::12::17 using 6:7 notitle lc rgb '#e6550d', '' skip 1 every ::12::17 using 8:9 notitle lc rgb '#31a354'
set origin 0.5000,0.2589
set size 0.5000,0.2389
set title 'P100 (Pascal): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::12::17 using 10:11:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::12::17 using 12:13 notitle lc rgb '#e6550d', '' skip 1 every ::12::17 using 14:15 notitle lc rgb '#31a354'
set origin 0.0000,0.0200
set size 0.5000,0.2389
set title 'RTX 6000 (Turing): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::18::23 using 4:5:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::18::23 using 6:7 notitle lc rgb '#e6550d', '' skip 1 every ::18::23 using 8:9 notitle lc rgb '#31a354'
set origin 0.5000,0.0200
set size 0.5000,0.2389
set title 'RTX 6000 (Turing): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::18::23 using 10:11:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::18::23 using 12:13 notitle lc rgb '#e6550d', '' skip 1 every ::18::23 using 14:15 notitle lc rgb '#31a354'
set origin 0,0
set size 1,0.0200
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0200
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
set key at screen 0.5,screen 0.0100 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#2b8cbe' title 'Zeus', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#e6550d' title 'Grid Search', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#31a354' title 'Directional Grid Search', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'Default (= 1)'

unset multiplot
set terminal svg noenhanced size 1200,1400 font 'sans,10' background '#ffffff'
set output 'figures/fig06-eta-tta.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figures 6 and 19: ETA and TTA of the last 5 recurrences over the expected Default (mean and sd over seeds; lower is better)'
unset key
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:1.4]
set xtics rotate by 25 right scale 0 font ',8'
set bars front
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
set origin 0.0000,0.7368
set size 0.5000,0.2389
set title 'V100 (Volta): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::0::5 using 4:5:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::0::5 using 6:7 notitle lc rgb '#e6550d', '' skip 1 every ::0::5 using 8:9 notitle lc rgb '#31a354'
set origin 0.5000,0.7368
set size 0.5000,0.2389
set title 'V100 (Volta): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::0::5 using 10:11:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::0::5 using 12:13 notitle lc rgb '#e6550d', '' skip 1 every ::0::5 using 14:15 notitle lc rgb '#31a354'
set origin 0.0000,0.4979
set size 0.5000,0.2389
set title 'A40 (Ampere): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::6::11 using 4:5:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::6::11 using 6:7 notitle lc rgb '#e6550d', '' skip 1 every ::6::11 using 8:9 notitle lc rgb '#31a354'
set origin 0.5000,0.4979
set size 0.5000,0.2389
set title 'A40 (Ampere): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::6::11 using 10:11:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::6::11 using 12:13 notitle lc rgb '#e6550d', '' skip 1 every ::6::11 using 14:15 notitle lc rgb '#31a354'
set origin 0.0000,0.2589
set size 0.5000,0.2389
set title 'P100 (Pascal): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::12::17 using 4:5:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::12::17 using 6:7 notitle lc rgb '#e6550d', '' skip 1 every ::12::17 using 8:9 notitle lc rgb '#31a354'
set origin 0.5000,0.2589
set size 0.5000,0.2389
set title 'P100 (Pascal): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::12::17 using 10:11:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::12::17 using 12:13 notitle lc rgb '#e6550d', '' skip 1 every ::12::17 using 14:15 notitle lc rgb '#31a354'
set origin 0.0000,0.0200
set size 0.5000,0.2389
set title 'RTX 6000 (Turing): ETA'
set ylabel 'ETA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::18::23 using 4:5:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::18::23 using 6:7 notitle lc rgb '#e6550d', '' skip 1 every ::18::23 using 8:9 notitle lc rgb '#31a354'
set origin 0.5000,0.0200
set size 0.5000,0.2389
set title 'RTX 6000 (Turing): TTA'
set ylabel 'TTA / Default'
plot 'csv/fig06-bars.csv' skip 1 every ::18::23 using 10:11:xtic(3) notitle lc rgb '#2b8cbe', '' skip 1 every ::18::23 using 12:13 notitle lc rgb '#e6550d', '' skip 1 every ::18::23 using 14:15 notitle lc rgb '#31a354'
set origin 0,0
set size 1,0.0200
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0200
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
set key at screen 0.5,screen 0.0100 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#2b8cbe' title 'Zeus', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#e6550d' title 'Grid Search', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#31a354' title 'Directional Grid Search', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'Default (= 1)'

unset multiplot
set output
