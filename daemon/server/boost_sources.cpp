// The one translation unit that compiles Boost.Asio and Boost.Beast. Every other file of the
// daemon (and the e2e client) includes their headers with BOOST_ASIO_SEPARATE_COMPILATION and
// BOOST_BEAST_SEPARATE_COMPILATION (boost_dep in daemon/meson.build), so the libraries' bodies
// are compiled once instead of in each file: a large saving of build time on small machines.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
