// kokkos-attention's Kokkos front end: exact scaled dot-product attention on Kokkos Views.
//
//   #include <KokkosAttn.hpp>
//   KokkosAttn::sdpa(exec, q, k, v, out);                 // q [B,T,N,H] ... out [B,T,N,Hv]
//   KokkosAttn::Plan plan(exec, q, k, v, out, options);   // choose once, execute many times
//   std::cout << KokkosAttn::explain(exec, q, k, v, out);  // which backend would run, and why
//
// docs/semantics.md describes the semantics; KokkosAttn::Options / Extras the options (the
// core's kattn:: types: KokkosAttn_Types.hpp). Extras take Views: `extras.lse = lse_view;`.
#pragma once

#include "KokkosAttn_ExecContext.hpp"
#include "KokkosAttn_Explain.hpp"
#include "KokkosAttn_KvAppend.hpp"
#include "KokkosAttn_Plan.hpp"
#include "KokkosAttn_Sdpa.hpp"
#include "KokkosAttn_Tensor.hpp"
#include "KokkosAttn_Types.hpp"
#include "kokkosattn/backend.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/problem.hpp"
