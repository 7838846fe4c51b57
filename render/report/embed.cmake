# embed.cmake: turns a file into a C source holding its bytes, so the program needs no data
# files at run time. cmake -DINPUT=file -DOUTPUT=file.c -DSYMBOL=name -P embed.cmake
file(READ "${INPUT}" content HEX)
string(LENGTH "${content}" hex_length)
math(EXPR byte_count "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n\t"
	bytes "${bytes}")
file(WRITE "${OUTPUT}"
	"/* Generated from ${SYMBOL}'s source file by embed.cmake; do not edit. */\n"
	"#include <stddef.h>\n\n"
	"const char ${SYMBOL}[] = {\n\t${bytes}0x00\n};\n"
	"const size_t ${SYMBOL}_size = ${byte_count};\n")
