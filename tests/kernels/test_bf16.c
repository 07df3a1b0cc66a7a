/* ls_f32_to_bf16 / ls_bf16_to_f32: round to nearest even at the exact halfway points, ordinary
 * rounding either side, NaN stays NaN (quiet), infinities and signed zero survive. */
#include "ls_kernels.h"
#include "ls_test.h"

#include <string.h>

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int main(void)
{
    /* Exact values pass through. */
    LS_CHECK_EQ_INT(ls_f32_to_bf16(1.0f), 0x3f80);
    LS_CHECK_EQ_INT(ls_f32_to_bf16(-2.0f), 0xc000);
    LS_CHECK(ls_bf16_to_f32(0x3f80) == 1.0f);
    LS_CHECK(ls_bf16_to_f32(0x4049) == 3.140625f);

    /* Halfway between 0x3f80 and 0x3f81: ties to even (down to 0x3f80). */
    LS_CHECK_EQ_INT(ls_f32_to_bf16(from_bits(0x3f808000u)), 0x3f80);
    /* Halfway between 0x3f81 and 0x3f82: ties to even (up to 0x3f82). */
    LS_CHECK_EQ_INT(ls_f32_to_bf16(from_bits(0x3f818000u)), 0x3f82);
    /* Just above / below halfway. */
    LS_CHECK_EQ_INT(ls_f32_to_bf16(from_bits(0x3f808001u)), 0x3f81);
    LS_CHECK_EQ_INT(ls_f32_to_bf16(from_bits(0x3f817fffu)), 0x3f81);
    /* Negative numbers round the magnitude the same way. */
    LS_CHECK_EQ_INT(ls_f32_to_bf16(from_bits(0xbf808000u)), 0xbf80);
    LS_CHECK_EQ_INT(ls_f32_to_bf16(from_bits(0xbf818000u)), 0xbf82);
    /* 1 + 2^-9 is below the half ulp (2^-8): rounds down. */
    LS_CHECK_EQ_INT(ls_f32_to_bf16(1.0f + 1.0f / 512.0f), 0x3f80);

    /* NaN: stays NaN (quiet bit set) whatever the payload, including a payload only in the low
     * 16 bits, which plain truncation would turn into infinity. */
    uint16_t n1 = ls_f32_to_bf16(from_bits(0x7f800001u));
    LS_CHECK((n1 & 0x7f80) == 0x7f80 && (n1 & 0x007f) != 0);
    LS_CHECK(isnan(ls_bf16_to_f32(n1)));
    uint16_t n2 = ls_f32_to_bf16(from_bits(0xffc00000u));
    LS_CHECK(isnan(ls_bf16_to_f32(n2)) && (n2 & 0x8000));
    LS_CHECK(isnan(ls_bf16_to_f32(ls_f32_to_bf16(NAN))));

    /* Infinities and overflow to infinity; signed zero. */
    LS_CHECK_EQ_INT(ls_f32_to_bf16(INFINITY), 0x7f80);
    LS_CHECK_EQ_INT(ls_f32_to_bf16(-INFINITY), 0xff80);
    LS_CHECK_EQ_INT(ls_f32_to_bf16(from_bits(0x7f7fffffu)), 0x7f80); /* FLT_MAX rounds up */
    LS_CHECK_EQ_INT(ls_f32_to_bf16(-0.0f), 0x8000);
    LS_CHECK_EQ_INT(ls_f32_to_bf16(0.0f), 0x0000);

    /* Round trip of every finite bf16 pattern is the identity. */
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        if ((h & 0x7f80) == 0x7f80)
            continue;
        bad += ls_f32_to_bf16(ls_bf16_to_f32((uint16_t)h)) != h;
    }
    LS_CHECK_EQ_INT(bad, 0);
    return ls_test_exit();
}
