// Pmi1Client: the client end of the PMI-1 wire protocol ("simple PMI"), the text protocol that
// MPICH's Hydra (mpiexec) and Slurm's pmi2 plugin serve to the processes they start, so that
// those can publish and look up key-value pairs in the job's store (how MPI libraries learn
// each other's addresses). One line per command and per reply, "cmd=NAME key=value ...\n":
//   init pmi_version=1 pmi_subversion=1  -> response_to_init ... rc=0
//   get_maxes                            -> maxes kvsname_max= keylen_max= vallen_max=
//   get_my_kvsname                       -> my_kvsname kvsname=
//   put kvsname= key= value=             -> put_result rc=0
//   barrier_in                           -> barrier_out     (puts are visible after it)
//   get kvsname= key=                    -> get_result rc=0 value=
//   finalize                             -> finalize_ack
// The connection is the inherited descriptor PMI_FD or, with PMI_PORT=host:port, a TCP
// connection introduced by "initack pmiid=$PMI_ID" (answered by initack and "set" lines giving
// size, rank and debug). Keys and values may not hold spaces, '=' or newlines.
// Owns its descriptor (closed on destruction). Blocking, each call bounded by the deadline it is
// given; one thread at a time.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::net {

class Pmi1Client {
 public:
  // Looks up one environment variable; nullptr when unset.
  using EnvLookup = std::function<const char*(const char* name)>;

  // Connects as the environment says (PMI_FD, else PMI_PORT with PMI_ID), and says init: the
  // server's version, limits and kvsname are known after. Errors say which variable is wrong.
  static Result<std::unique_ptr<Pmi1Client>> Connect(TimeNs deadline,
                                                     const EnvLookup& env = nullptr);
  // Over a descriptor already connected to a PMI-1 server (tests: one end of a socketpair).
  static Result<std::unique_ptr<Pmi1Client>> Open(int fd, TimeNs deadline);
  ~Pmi1Client();
  Pmi1Client(const Pmi1Client&) = delete;
  Pmi1Client& operator=(const Pmi1Client&) = delete;

  Status Put(const std::string& key, const std::string& value, TimeNs deadline);
  // Returns once every process of the job has entered it.
  Status Barrier(TimeNs deadline);
  Result<std::string> Get(const std::string& key, TimeNs deadline);
  // Tells the server this process is done with it and closes the connection.
  Status Finalize(TimeNs deadline);

  const std::string& kvsname() const { return kvsname_; }
  int max_value_length() const { return vallen_max_; }
  // From the PMI_PORT introduction ("set rank=", "set size="); -1 over PMI_FD.
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  explicit Pmi1Client(int fd) : fd_(fd) {}
  Status Handshake(TimeNs deadline);
  Status Send(const std::string& line);
  // The next reply, which must be `cmd`; an rc other than 0 is an error naming the command.
  Result<std::map<std::string, std::string>> Expect(const std::string& cmd, TimeNs deadline);
  Result<std::string> ReadLine(TimeNs deadline);

  int fd_ = -1;
  std::string buffer_;  // bytes read past the last line
  std::string kvsname_;
  int keylen_max_ = 64;
  int vallen_max_ = 256;
  int rank_ = -1;
  int size_ = -1;
};

}  // namespace genie::net
