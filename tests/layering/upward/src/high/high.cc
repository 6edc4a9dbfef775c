#include "zeus/high/high.h"
#include "low/detail.h"    // private header of another part
#include "zeus/low/low.h"  // downward: fine
