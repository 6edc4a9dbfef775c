#include "zeus/low/low.h"
#include "zeus/high/high.h"  // upward: low may not see high
