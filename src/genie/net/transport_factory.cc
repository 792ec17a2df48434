#include "genie/net/transport_factory.h"

#include <fmt/format.h>

#include "genie/net/fabric/fabric_transport.h"
#include "genie/net/tcp/tcp_transport.h"

namespace genie::net {

TransportFactory DefaultTransportFactory() {
  return [](loop::EventLoop* loop,
            const TransportOptions& options) -> Result<std::unique_ptr<Transport>> {
    GENIE_ASSIGN_OR_RETURN(auto tcp, TcpTransport::Create(loop, options));
    return std::unique_ptr<Transport>(std::move(tcp));
  };
}

TransportFactory FabricTransportFactory() {
  return [](loop::EventLoop* loop,
            const TransportOptions& options) -> Result<std::unique_ptr<Transport>> {
    GENIE_ASSIGN_OR_RETURN(auto fabric, FabricTransport::Create(loop, options));
    return std::unique_ptr<Transport>(std::move(fabric));
  };
}

Result<TransportFactory> TransportFactoryFor(const std::string& kind) {
  if (kind == "tcp") return DefaultTransportFactory();
  if (kind == "fabric") return FabricTransportFactory();
  return Status::InvalidArgument(fmt::format("unknown transport '{}': use tcp or fabric", kind));
}

}  // namespace genie::net
