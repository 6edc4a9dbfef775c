# Draws figures/fig07-regret-p100.png and figures/fig07-regret-p100.svg from the CSVs in csv/.
# Run from the report directory: gnuplot figures/fig07-regret-p100.gp
set encoding utf8
set terminal pngcairo noenhanced size 1350,810 font 'sans,10'
set output 'figures/fig07-regret-p100.png'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 7: cumulative regret over recurrences, P100 (Pascal) (in optimal recurrences, log scale; mean over seeds, band = ±1 sd)'
unset key
set xlabel 'recurrence'
set ylabel 'regret / C* (log scale)'
set logscale y 10
set yrange [0.1:*]
floor01(v) = v > 0.1 ? v : 0.1
set origin 0.0000,0.5074
set size 0.3333,0.4506
set title 'cifar100/shufflenetv2'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::0::107 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::0::107 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::0::107 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::0::107 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::0::107 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::0::107 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::0::107 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0.3333,0.5074
set size 0.3333,0.4506
set title 'imagenet/resnet50'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::108::131 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::108::131 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::108::131 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::108::131 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::108::131 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::108::131 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::108::131 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0.6667,0.5074
set size 0.3333,0.4506
set title 'squad/bert_base_uncased'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::132::191 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::132::191 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::132::191 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::132::191 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::132::191 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::132::191 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::132::191 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0.0000,0.0568
set size 0.3333,0.4506
set title 'librispeech/deepspeech2'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::192::299 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::192::299 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::192::299 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::192::299 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::192::299 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::192::299 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::192::299 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0.3333,0.0568
set size 0.3333,0.4506
set title 'movielens-1m/ncf'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::300::455 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::300::455 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::300::455 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::300::455 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::300::455 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::300::455 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::300::455 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0.6667,0.0568
set size 0.3333,0.4506
set title 'sentiment140/bert_base_uncased'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::456::503 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::456::503 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::456::503 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::456::503 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::456::503 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::456::503 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::456::503 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0,0
set size 1,0.0568
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0568
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
set key at screen 0.5,screen 0.0284 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with lines lw 2 lc rgb '#2b8cbe' title 'Zeus', '+' using (NaN):(NaN) with lines lw 2 lc rgb '#e6550d' title 'Grid Search', '+' using (NaN):(NaN) with lines lw 1.5 dt 2 lc rgb '#fdae6b' title 'Grid Search, no early stopping', '+' using (NaN):(NaN) with lines lw 2 lc rgb '#31a354' title 'Directional Grid Search', '+' using (NaN):(NaN) with lines lw 1.5 dt 2 lc rgb '#a1d99b' title 'Directional, no early stopping'

unset multiplot
set terminal svg noenhanced size 1350,810 font 'sans,10' background '#ffffff'
set output 'figures/fig07-regret-p100.svg'
reset
set datafile separator comma
set datafile missing 'nan'
set grid lc rgb '#dddddd'
set border lc rgb '#444444'
set multiplot title 'Figure 7: cumulative regret over recurrences, P100 (Pascal) (in optimal recurrences, log scale; mean over seeds, band = ±1 sd)'
unset key
set xlabel 'recurrence'
set ylabel 'regret / C* (log scale)'
set logscale y 10
set yrange [0.1:*]
floor01(v) = v > 0.1 ? v : 0.1
set origin 0.0000,0.5074
set size 0.3333,0.4506
set title 'cifar100/shufflenetv2'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::0::107 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::0::107 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::0::107 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::0::107 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::0::107 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::0::107 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::0::107 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0.3333,0.5074
set size 0.3333,0.4506
set title 'imagenet/resnet50'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::108::131 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::108::131 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::108::131 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::108::131 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::108::131 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::108::131 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::108::131 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0.6667,0.5074
set size 0.3333,0.4506
set title 'squad/bert_base_uncased'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::132::191 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::132::191 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::132::191 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::132::191 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::132::191 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::132::191 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::132::191 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0.0000,0.0568
set size 0.3333,0.4506
set title 'librispeech/deepspeech2'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::192::299 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::192::299 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::192::299 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::192::299 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::192::299 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::192::299 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::192::299 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0.3333,0.0568
set size 0.3333,0.4506
set title 'movielens-1m/ncf'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::300::455 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::300::455 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::300::455 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::300::455 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::300::455 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::300::455 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::300::455 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0.6667,0.0568
set size 0.3333,0.4506
set title 'sentiment140/bert_base_uncased'
plot 'csv/fig07-regret-p100.csv' skip 1 every ::456::503 using 3:(floor01($4-$5)):(floor01($4+$5)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#2b8cbe' notitle, '' skip 1 every ::456::503 using 3:(floor01($6-$7)):(floor01($6+$7)) with filledcurves fs transparent solid 0.2 noborder lc rgb '#e6550d' notitle, '' skip 1 every ::456::503 using 3:(floor01($4)) with lines lw 2 lc rgb '#2b8cbe' notitle, '' skip 1 every ::456::503 using 3:(floor01($6)) with lines lw 2 lc rgb '#e6550d' notitle, '' skip 1 every ::456::503 using 3:(floor01($8)) with lines lw 1.5 dt 2 lc rgb '#fdae6b' notitle, '' skip 1 every ::456::503 using 3:(floor01($10)) with lines lw 2 lc rgb '#31a354' notitle, '' skip 1 every ::456::503 using 3:(floor01($12)) with lines lw 1.5 dt 2 lc rgb '#a1d99b' notitle
set origin 0,0
set size 1,0.0568
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen 0.0568
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
set key at screen 0.5,screen 0.0284 center center horizontal Left reverse samplen 2.5 width 1 font ',9'
plot '+' using (NaN):(NaN) with lines lw 2 lc rgb '#2b8cbe' title 'Zeus', '+' using (NaN):(NaN) with lines lw 2 lc rgb '#e6550d' title 'Grid Search', '+' using (NaN):(NaN) with lines lw 1.5 dt 2 lc rgb '#fdae6b' title 'Grid Search, no early stopping', '+' using (NaN):(NaN) with lines lw 2 lc rgb '#31a354' title 'Directional Grid Search', '+' using (NaN):(NaN) with lines lw 1.5 dt 2 lc rgb '#a1d99b' title 'Directional, no early stopping'

unset multiplot
set output
