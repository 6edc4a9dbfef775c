# A three-part tree with one violation of each kind the check must catch, and
# one include it must allow (high includes low's internal header shared.h).
set(ZEUS_PARTS "low;high;side")
set(ZEUS_PART_low_DIR "src/low")
set(ZEUS_PART_low_DEPS "")
set(ZEUS_PART_low_INTERNAL "shared.h;gone.h")
set(ZEUS_PART_high_DIR "src/high")
set(ZEUS_PART_high_DEPS "low")
set(ZEUS_PART_side_DIR "src/side")
set(ZEUS_PART_side_DEPS "")
