/* print_csv_header.c — prints ls_csv_header() so the CLI tests can compare a CSV's first line. */
#include <stdio.h>

#include "ls_harness.h"

int main(void)
{
    printf("%s\n", ls_csv_header());
    return 0;
}
