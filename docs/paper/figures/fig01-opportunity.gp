# Draws figures/fig01-opportunity.png and figures/fig01-opportunity.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig01-opportunity.gp
set encoding utf8
set terminal pngcairo noenhanced size 1100,720 font 'sans,10'
set output 'figures/fig01-opportunity.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 2,2 title 'Figures 1 and 15: energy to accuracy an oracle could save, relative to the default configuration (b0 at the maximum power limit)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:1.15]
set ylabel 'ETA / default ETA'
set xtics rotate by -25 scale 0
set key top right horizontal font ',9'
set title 'V100 (Volta)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::0::5 using 13:xtic(3) title 'best batch size' lc rgb '#fdae6b', '' skip 1 every ::0::5 using 14 title 'best power limit' lc rgb '#31a354', '' skip 1 every ::0::5 using 15 title 'both' lc rgb '#2b8cbe', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'default'
set title 'A40 (Ampere)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::6::11 using 13:xtic(3) title 'best batch size' lc rgb '#fdae6b', '' skip 1 every ::6::11 using 14 title 'best power limit' lc rgb '#31a354', '' skip 1 every ::6::11 using 15 title 'both' lc rgb '#2b8cbe', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'default'
set title 'P100 (Pascal)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::12::17 using 13:xtic(3) title 'best batch size' lc rgb '#fdae6b', '' skip 1 every ::12::17 using 14 title 'best power limit' lc rgb '#31a354', '' skip 1 every ::12::17 using 15 title 'both' lc rgb '#2b8cbe', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'default'
set title 'RTX 6000 (Turing)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::18::23 using 13:xtic(3) title 'best batch size' lc rgb '#fdae6b', '' skip 1 every ::18::23 using 14 title 'best power limit' lc rgb '#31a354', '' skip 1 every ::18::23 using 15 title 'both' lc rgb '#2b8cbe', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'default'

unset multiplot
set terminal svg noenhanced size 1100,720 font 'sans,10' background '#ffffff'
set output 'figures/fig01-opportunity.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot layout 2,2 title 'Figures 1 and 15: energy to accuracy an oracle could save, relative to the default configuration (b0 at the maximum power limit)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:1.15]
set ylabel 'ETA / default ETA'
set xtics rotate by -25 scale 0
set key top right horizontal font ',9'
set title 'V100 (Volta)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::0::5 using 13:xtic(3) title 'best batch size' lc rgb '#fdae6b', '' skip 1 every ::0::5 using 14 title 'best power limit' lc rgb '#31a354', '' skip 1 every ::0::5 using 15 title 'both' lc rgb '#2b8cbe', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'default'
set title 'A40 (Ampere)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::6::11 using 13:xtic(3) title 'best batch size' lc rgb '#fdae6b', '' skip 1 every ::6::11 using 14 title 'best power limit' lc rgb '#31a354', '' skip 1 every ::6::11 using 15 title 'both' lc rgb '#2b8cbe', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'default'
set title 'P100 (Pascal)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::12::17 using 13:xtic(3) title 'best batch size' lc rgb '#fdae6b', '' skip 1 every ::12::17 using 14 title 'best power limit' lc rgb '#31a354', '' skip 1 every ::12::17 using 15 title 'both' lc rgb '#2b8cbe', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'default'
set title 'RTX 6000 (Turing)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::18::23 using 13:xtic(3) title 'best batch size' lc rgb '#fdae6b', '' skip 1 every ::18::23 using 14 title 'best power limit' lc rgb '#31a354', '' skip 1 every ::18::23 using 15 title 'both' lc rgb '#2b8cbe', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'default'

unset multiplot
set output
