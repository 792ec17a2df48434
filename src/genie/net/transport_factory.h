// TransportFactory: how a caller that needs "a transport" (RealBackend) gets one without
// naming its kind, so tests can hand in a FaultyTransport and the libfabric transport sits
// beside TCP. DefaultTransportFactory() makes the production transport (TCP);
// TransportFactoryFor("tcp" | "fabric") the one a run's --transport names (the fabric one
// reads TransportOptions::fabric_*).
//
// A factory is called on the loop's thread; the transport it returns belongs to that loop,
// which must outlive it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "genie/common/status.h"
#include "genie/loop/event_loop.h"
#include "genie/net/transport.h"

namespace genie::net {

using TransportFactory = std::function<Result<std::unique_ptr<Transport>>(
    loop::EventLoop* loop, const TransportOptions& options)>;

TransportFactory DefaultTransportFactory();
TransportFactory FabricTransportFactory();
// "tcp" or "fabric"; anything else is InvalidArgument naming the choices.
Result<TransportFactory> TransportFactoryFor(const std::string& kind);

}  // namespace genie::net
