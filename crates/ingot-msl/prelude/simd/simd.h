// <simd/simd.h>: part of the ingot Metal standard library
#pragma once
#include <ingot/metal_stdlib.h>
