#include "zeus/high/high.h"
#include "zeus/low/low.h"  // downward: fine
#include "low/detail.h"  // private header of another part
