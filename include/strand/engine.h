#ifndef STRAND_PUBLIC_ENGINE_H_
#define STRAND_PUBLIC_ENGINE_H_

// strand's embedding API, the one header an application needs to open an
// engine and define its tables, indexes and stored procedures
// (docs/embedding.md walks through a complete program). Sessions, which
// run transactions, are in strand/session.h; what a transaction can do in
// strand/txn.h.
//
// Everything an application uses is also named in namespace strand:
//   strand::Engine, strand::EngineOptions, strand::Procedure<Sig>,
//   strand::TableId, strand::IndexId, strand::Schema, strand::ColumnType.

#include "engine/engine.h"          // IWYU pragma: export
#include "engine/engine_options.h"  // IWYU pragma: export
#include "engine/procedure.h"       // IWYU pragma: export
#include "strand/schema.h"          // IWYU pragma: export

namespace strand {

using engine::Engine;
using engine::EngineMode;
using engine::EngineOptions;
using engine::Procedure;
using engine::ProcedureId;
using engine::RetryPolicy;
using engine::WalOptions;
using txn::IndexId;
using txn::TableId;

}  // namespace strand

#endif  // STRAND_PUBLIC_ENGINE_H_
