// SPDX-License-Identifier: Apache-2.0
/*
 * ledger (C++): a busy workload whose time is in a member function of a class template in a
 * namespace, billing::Ledger<long>::settle(unsigned long), called from billing::run_day(), for
 * tests/integration/test_native_langs.sh. Built with g++ -O2 -g (no frame pointers): the
 * std::vector<long>::at() inlined into settle is a frame of its own, from the DWARF.
 *
 * Usage: ledger   prints "ledger running" and computes until killed.
 */
#include <cstdint>
#include <cstdio>
#include <vector>

namespace billing {

template <typename T> class Ledger {
public:
	explicit Ledger(std::size_t n) : entries_(n, 1) {}
	__attribute__((noinline)) T settle(std::uint64_t rounds);

private:
	std::vector<T> entries_;
};

template <typename T> T Ledger<T>::settle(std::uint64_t rounds)
{
	T h = 0x243f6a88;

	for (std::uint64_t i = 0; i < rounds; i++) {
		T &e = entries_.at(i % entries_.size());
		h ^= e;
		h *= 0x5bd1e995;
		h ^= h >> 15;
		e = h;
	}
	return h;
}

/* The caller of settle: its work after the call keeps the call from being a tail call (a
 * jump, which leaves no frame of run_day to see). */
__attribute__((noinline)) long run_day(Ledger<long> &ledger)
{
	return ledger.settle(1u << 20) + 1;
}

} // namespace billing

volatile long ledger_sink;

int main()
{
	billing::Ledger<long> ledger(512);

	std::setvbuf(stdout, nullptr, _IONBF, 0);
	std::printf("ledger running\n");
	for (;;)
		ledger_sink = ledger_sink + billing::run_day(ledger);
}
