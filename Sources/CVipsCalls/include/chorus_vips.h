#ifndef CHORUS_VIPS_H
#define CHORUS_VIPS_H

#include <stddef.h>

/// A libvips image, opaque here so that Swift imports none of glib.
typedef struct _VipsImage ChorusVipsImage;

/// The formats an image is written in.
typedef enum { CHORUS_VIPS_JPEG = 0, CHORUS_VIPS_PNG = 1, CHORUS_VIPS_GIF = 2, CHORUS_VIPS_WEBP = 3 } ChorusVipsFormat;

/// Starts libvips for one image at a time on one thread: no operation cache, and the loaders it marks untrusted
/// (those not fuzzed upstream) refused. Returns 0, or -1 (the reason in chorus_vips_error).
int chorus_vips_start(const char *program);

/// The last error libvips reported, copied into `buffer` (cleared in libvips).
void chorus_vips_error(char *buffer, size_t capacity);

/// The class of the loader libvips would pick for these bytes (`VipsForeignLoadJpegBuffer`, ...), or NULL.
const char *chorus_vips_loader(const void *bytes, size_t length);

/// The image in `bytes` with only its header read: no pixel is decoded until an operation asks for one. `all_frames`
/// loads every frame of an animation stacked as one tall image. NULL when the header does not parse.
ChorusVipsImage *chorus_vips_open(const void *bytes, size_t length, int all_frames);

int chorus_vips_width(ChorusVipsImage *image);
int chorus_vips_height(ChorusVipsImage *image);
/// The height of one frame (the image's height when it has one).
int chorus_vips_page_height(ChorusVipsImage *image);
/// The frames the file holds, whether or not they were loaded.
int chorus_vips_pages(ChorusVipsImage *image);
int chorus_vips_has_alpha(ChorusVipsImage *image);
/// Whether the orientation tag turns the image a quarter turn, so that upright its width and height swap.
int chorus_vips_orientation_swaps(ChorusVipsImage *image);

/// Whether the image carries an ICC colour profile (a Display P3 photo from a phone, say).
int chorus_vips_has_profile(ChorusVipsImage *image);

/// `bytes` decoded with shrink-on-load so that it fits in `size`×`size` (never enlarged), turned upright by its
/// orientation tag, held in memory; with `by_profile`, its colours are moved from its profile to sRGB (costly, so
/// only for images that have one). NULL on any decoding error.
ChorusVipsImage *chorus_vips_thumbnail(const void *bytes, size_t length, int size, int all_frames, int by_profile);

/// `image` made to fit in `size`×`size` (never enlarged), held in memory.
ChorusVipsImage *chorus_vips_shrink(ChorusVipsImage *image, int size);

/// The first frame of an animation.
ChorusVipsImage *chorus_vips_first_frame(ChorusVipsImage *image);

/// `image` as 8-bit sRGB: with its alpha kept when `keep_alpha`, else flattened onto white.
ChorusVipsImage *chorus_vips_srgb(ChorusVipsImage *image, int keep_alpha);

/// `image` written in `format` with no metadata at all (strip); the bytes are freed with chorus_vips_free.
int chorus_vips_save(ChorusVipsImage *image, ChorusVipsFormat format, void **bytes, size_t *length);

/// The pixels of `image`, row by row; freed with chorus_vips_free.
int chorus_vips_pixels(ChorusVipsImage *image, void **bytes, size_t *length);

void chorus_vips_free(void *bytes);
void chorus_vips_release(ChorusVipsImage *image);

// In C because libvips' operations take their options as variadic arguments, which Swift cannot pass.

#endif
