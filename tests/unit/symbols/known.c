/* known.c: a shared library with a known function, built with -g, for test_symbols. */
/* clang-format off */
const int symbols_test_line = __LINE__ + 1;
int symbols_test_function(int value) { return value * 3 + symbols_test_line; }
/* clang-format on */
