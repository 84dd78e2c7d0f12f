#pragma once
// The seed's routes in the order they are tried (route_table.cpp): the one list a new route joins.
#include <span>

#include "seed/route.h"

namespace cutegen::seed {

std::span<const Route> route_table();

// The context the claims read, for `graph` (traced).
MatchContext match_context(const OpGraph& graph);

}  // namespace cutegen::seed
