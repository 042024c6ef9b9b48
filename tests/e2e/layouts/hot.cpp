// SPDX-License-Identifier: MIT
/*
 * hot.cpp - the layouts program in C++: the leaf is a static member
 * function template of a class template, the caller a function template,
 * both in namespace ns.
 *   hot_cpp [SECS]   print "ready PID", then spin for SECS (default 30) s
 */
#include <cstdint>
#include <cstdlib>

#include "run.h"

#if defined(__clang__)
#define HOT_NOINLINE __attribute__((noinline))
#else
#define HOT_NOINLINE __attribute__((noinline, noclone))
#endif

namespace ns {

template <typename T> struct Hasher {
	static const T tab[16];

	template <unsigned Rounds> HOT_NOINLINE static T leaf(T h)
	{
		for (unsigned r = 0; r < Rounds; r++)
			for (unsigned i = 0; i < 16; i++)
				h = (h ^ tab[i]) * static_cast<T>(16777619u);
		return h;
	}
};

template <typename T>
const T Hasher<T>::tab[16] = {
	0x9e3779b9, 0x7f4a7c15, 0xf39cc060, 0x5ced1a2b, 0x85ebca6b, 0xc2b2ae35,
	0x27d4eb2f, 0x165667b1, 0xd3a2646c, 0xfd7046c5, 0xb55a4f09, 0x1b873593,
	0xcc9e2d51, 0xe6546b64, 0x94d049bb, 0xbf58476d,
};

template <typename T> HOT_NOINLINE T caller(T seed, unsigned n)
{
	T h = seed;

	for (unsigned i = 0; i < n; i++)
		h = Hasher<T>::template leaf<4096>(h + i) ^ (h >> 3);
	return h;
}

} // namespace ns

int main(int argc, char **argv)
{
	double secs = argc > 1 ? std::atof(argv[1]) : 30, end = now() + secs;
	std::uint32_t h = 1;

	say_ready();
	do {
		h = ns::caller<std::uint32_t>(h, 10);
		layout_sink = h;
	} while (now() < end);
	return 0;
}
