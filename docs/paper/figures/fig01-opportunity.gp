# Draws figures/fig01-opportunity.png and figures/fig01-opportunity.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig01-opportunity.gp
set encoding utf8
set terminal pngcairo noenhanced size 1100,740 font 'sans,10'
set output 'figures/fig01-opportunity.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figures 1 and 15: energy to accuracy an oracle could save, relative to the default configuration (b0 at the maximum power limit)'
unset key
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:1.1]
set ylabel 'ETA / default ETA'
set xtics rotate by 25 right scale 0
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
set origin 0.0000,0.5081
set size 0.5000,0.4459
set title 'V100 (Volta)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::0::5 using 13:xtic(3) notitle lc rgb '#fdae6b', '' skip 1 every ::0::5 using 14 notitle lc rgb '#31a354', '' skip 1 every ::0::5 using 15 notitle lc rgb '#2b8cbe'
set origin 0.5000,0.5081
set size 0.5000,0.4459
set title 'A40 (Ampere)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::6::11 using 13:xtic(3) notitle lc rgb '#fdae6b', '' skip 1 every ::6::11 using 14 notitle lc rgb '#31a354', '' skip 1 every ::6::11 using 15 notitle lc rgb '#2b8cbe'
set origin 0.0000,0.0622
set size 0.5000,0.4459
set title 'P100 (Pascal)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::12::17 using 13:xtic(3) notitle lc rgb '#fdae6b', '' skip 1 every ::12::17 using 14 notitle lc rgb '#31a354', '' skip 1 every ::12::17 using 15 notitle lc rgb '#2b8cbe'
set origin 0.5000,0.0622
set size 0.5000,0.4459
set title 'RTX 6000 (Turing)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::18::23 using 13:xtic(3) notitle lc rgb '#fdae6b', '' skip 1 every ::18::23 using 14 notitle lc rgb '#31a354', '' skip 1 every ::18::23 using 15 notitle lc rgb '#2b8cbe'
set origin 0,0
set size 1,0.0622
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0622
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
set key at screen 0.5,screen 0.0311 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#fdae6b' title 'best batch size (at the maximum power limit)', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#31a354' title 'best power limit (at b0)', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#2b8cbe' title 'best of both', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'default'

unset multiplot
set terminal svg noenhanced size 1100,740 font 'sans,10' background '#ffffff'
set output 'figures/fig01-opportunity.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figures 1 and 15: energy to accuracy an oracle could save, relative to the default configuration (b0 at the maximum power limit)'
unset key
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:1.1]
set ylabel 'ETA / default ETA'
set xtics rotate by 25 right scale 0
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
set origin 0.0000,0.5081
set size 0.5000,0.4459
set title 'V100 (Volta)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::0::5 using 13:xtic(3) notitle lc rgb '#fdae6b', '' skip 1 every ::0::5 using 14 notitle lc rgb '#31a354', '' skip 1 every ::0::5 using 15 notitle lc rgb '#2b8cbe'
set origin 0.5000,0.5081
set size 0.5000,0.4459
set title 'A40 (Ampere)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::6::11 using 13:xtic(3) notitle lc rgb '#fdae6b', '' skip 1 every ::6::11 using 14 notitle lc rgb '#31a354', '' skip 1 every ::6::11 using 15 notitle lc rgb '#2b8cbe'
set origin 0.0000,0.0622
set size 0.5000,0.4459
set title 'P100 (Pascal)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::12::17 using 13:xtic(3) notitle lc rgb '#fdae6b', '' skip 1 every ::12::17 using 14 notitle lc rgb '#31a354', '' skip 1 every ::12::17 using 15 notitle lc rgb '#2b8cbe'
set origin 0.5000,0.0622
set size 0.5000,0.4459
set title 'RTX 6000 (Turing)'
plot 'csv/fig01-opportunity.csv' skip 1 every ::18::23 using 13:xtic(3) notitle lc rgb '#fdae6b', '' skip 1 every ::18::23 using 14 notitle lc rgb '#31a354', '' skip 1 every ::18::23 using 15 notitle lc rgb '#2b8cbe'
set origin 0,0
set size 1,0.0622
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0622
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
set key at screen 0.5,screen 0.0311 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#fdae6b' title 'best batch size (at the maximum power limit)', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#31a354' title 'best power limit (at b0)', '+' using (NaN):(NaN) with boxes fs solid 0.85 border -1 lc rgb '#2b8cbe' title 'best of both', '+' using (NaN):(NaN) with lines dt 2 lw 1.5 lc rgb 'black' title 'default'

unset multiplot
set output
