#include "zeus/high/high.h"
#include "low/detail.h"    // private header of another part
#include "low/shared.h"    // internal header of a part high depends on: fine
#include "zeus/low/low.h"  // downward: fine
