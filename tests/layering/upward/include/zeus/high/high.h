#pragma once
#include "zeus/low/low.h"
