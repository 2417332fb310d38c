#include "chorus_vips.h"

#include <string.h>
#include <vips/vips.h>

int chorus_vips_start(const char *program) {
    if (VIPS_INIT(program)) return -1;
    vips_concurrency_set(2);
    vips_cache_set_max(0);
    vips_block_untrusted_set(TRUE);
    return 0;
}

void chorus_vips_error(char *buffer, size_t capacity) {
    if (capacity == 0) return;
    strncpy(buffer, vips_error_buffer(), capacity - 1);
    buffer[capacity - 1] = 0;
    vips_error_clear();
}

const char *chorus_vips_loader(const void *bytes, size_t length) {
    return vips_foreign_find_load_buffer(bytes, length);
}

ChorusVipsImage *chorus_vips_open(const void *bytes, size_t length, int all_frames) {
    if (all_frames) {
        return vips_image_new_from_buffer(bytes, length, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on",
                                          VIPS_FAIL_ON_ERROR, "n", -1, NULL);
    }
    return vips_image_new_from_buffer(bytes, length, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on",
                                      VIPS_FAIL_ON_ERROR, NULL);
}

int chorus_vips_width(ChorusVipsImage *image) { return vips_image_get_width(image); }
int chorus_vips_height(ChorusVipsImage *image) { return vips_image_get_height(image); }
int chorus_vips_page_height(ChorusVipsImage *image) { return vips_image_get_page_height(image); }
int chorus_vips_pages(ChorusVipsImage *image) { return vips_image_get_n_pages(image); }
int chorus_vips_has_alpha(ChorusVipsImage *image) { return vips_image_hasalpha(image); }
int chorus_vips_orientation_swaps(ChorusVipsImage *image) { return vips_image_get_orientation_swap(image); }

/// `image` copied into memory, so that it can be read more than once; `image` is released either way.
static ChorusVipsImage *in_memory(VipsImage *image) {
    if (!image) return NULL;
    VipsImage *copy = vips_image_copy_memory(image);
    g_object_unref(image);
    return copy;
}

int chorus_vips_has_profile(ChorusVipsImage *image) {
    return vips_image_get_typeof(image, VIPS_META_ICC_NAME) != 0;
}

ChorusVipsImage *chorus_vips_thumbnail(const void *bytes, size_t length, int size, int all_frames, int by_profile) {
    VipsImage *out = NULL;
    const char *options = all_frames ? "n=-1" : "";
    int failed = by_profile ? vips_thumbnail_buffer((void *)bytes, length, &out, size, "height", size, "size",
                                                    VIPS_SIZE_DOWN, "option_string", options, "export_profile",
                                                    "srgb", "fail_on", VIPS_FAIL_ON_ERROR, NULL)
                            : vips_thumbnail_buffer((void *)bytes, length, &out, size, "height", size, "size",
                                                    VIPS_SIZE_DOWN, "option_string", options, "fail_on",
                                                    VIPS_FAIL_ON_ERROR, NULL);
    return failed ? NULL : in_memory(out);
}

ChorusVipsImage *chorus_vips_shrink(ChorusVipsImage *image, int size) {
    VipsImage *out = NULL;
    if (vips_thumbnail_image(image, &out, size, "height", size, "size", VIPS_SIZE_DOWN, NULL)) return NULL;
    return in_memory(out);
}

ChorusVipsImage *chorus_vips_first_frame(ChorusVipsImage *image) {
    VipsImage *out = NULL;
    int height = vips_image_get_page_height(image);
    if (vips_extract_area(image, &out, 0, 0, vips_image_get_width(image), height, NULL)) return NULL;
    return in_memory(out);
}

ChorusVipsImage *chorus_vips_srgb(ChorusVipsImage *image, int keep_alpha) {
    VipsImage *colour = NULL, *flat = NULL, *out = NULL;
    if (vips_colourspace(image, &colour, VIPS_INTERPRETATION_sRGB, NULL)) return NULL;
    if (!keep_alpha && vips_image_hasalpha(colour)) {
        VipsArrayDouble *white = vips_array_double_newv(3, 255.0, 255.0, 255.0);
        int failed = vips_flatten(colour, &flat, "background", white, NULL);
        vips_area_unref(VIPS_AREA(white));
        g_object_unref(colour);
        if (failed) return NULL;
    } else {
        flat = colour;
    }
    int failed = vips_cast_uchar(flat, &out, NULL);
    g_object_unref(flat);
    return failed ? NULL : in_memory(out);
}

int chorus_vips_save(ChorusVipsImage *image, ChorusVipsFormat format, void **bytes, size_t *length) {
    switch (format) {
    case CHORUS_VIPS_JPEG:
        return vips_jpegsave_buffer(image, bytes, length, "strip", TRUE, "Q", 85, "optimize_coding", TRUE, NULL);
    case CHORUS_VIPS_PNG:
        return vips_pngsave_buffer(image, bytes, length, "strip", TRUE, "compression", 6, NULL);
    case CHORUS_VIPS_GIF:
        return vips_gifsave_buffer(image, bytes, length, "strip", TRUE, NULL);
    case CHORUS_VIPS_WEBP:
        return vips_webpsave_buffer(image, bytes, length, "strip", TRUE, "Q", 80, NULL);
    }
    return -1;
}

int chorus_vips_pixels(ChorusVipsImage *image, void **bytes, size_t *length) {
    *bytes = vips_image_write_to_memory(image, length);
    return *bytes ? 0 : -1;
}

void chorus_vips_free(void *bytes) { g_free(bytes); }
void chorus_vips_release(ChorusVipsImage *image) {
    if (image) g_object_unref(image);
}
