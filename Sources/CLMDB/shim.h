#ifndef CHORUS_CLMDB_SHIM_H
#define CHORUS_CLMDB_SHIM_H
#include <lmdb.h>
#endif
