# A two-part tree with one violation of each kind the check must catch.
set(ZEUS_PARTS "low;high")
set(ZEUS_PART_low_DIR "src/low")
set(ZEUS_PART_low_DEPS "")
set(ZEUS_PART_high_DIR "src/high")
set(ZEUS_PART_high_DEPS "low")
