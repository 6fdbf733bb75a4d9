/* stb_image and stb_image_write compiled into the fuzz_image target (the
 * normal build links Debian's libstb instead), so that libFuzzer sees the
 * decoders' coverage and the sanitizers check them. */
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image.h>
#include <stb_image_write.h>
