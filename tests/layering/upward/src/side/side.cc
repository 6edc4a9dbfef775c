#include "low/shared.h"  // internal header of a part side does not depend on
