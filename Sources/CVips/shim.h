#ifndef CHORUS_CVIPS_SHIM_H
#define CHORUS_CVIPS_SHIM_H
#include <vips/vips.h>
#endif
