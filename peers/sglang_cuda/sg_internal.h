// sg_internal.h — shared between sg_conv.cu and sg_kda.cu: this thread's error buffer (1024 bytes).
#pragma once
char* ls_sg_err();
