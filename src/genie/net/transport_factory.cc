#include "genie/net/transport_factory.h"

#include "genie/net/tcp/tcp_transport.h"

namespace genie::net {

TransportFactory DefaultTransportFactory() {
  return [](loop::EventLoop* loop,
            const TransportOptions& options) -> Result<std::unique_ptr<Transport>> {
    GENIE_ASSIGN_OR_RETURN(auto tcp, TcpTransport::Create(loop, options));
    return std::unique_ptr<Transport>(std::move(tcp));
  };
}

}  // namespace genie::net
