----------------------------- MODULE Separations -----------------------------
(***************************************************************************)
(* Separations: single faults that each break exactly one property.        *)
(* Exhaustive finite witnesses that the six properties are not implied by  *)
(* one another.  The module reuses the resume plane unchanged (its six     *)
(* switches all FALSE in the configurations) and swaps only the recovery   *)
(* step for one with three switches of its own:                            *)
(*                                                                         *)
(*  NondetRegate     recovery at F + 1 is right, but whether the gate is   *)
(*                   re-armed at once or only when the run reaches it is   *)
(*                   chosen nondeterministically: equal durable state,     *)
(*                   different decisions -> only RD breaks.                *)
(*  StateRebuild     recovery re-runs the durable prefix's code to rebuild *)
(*                   in-memory state, serving every effect from the log,   *)
(*                   then continues at F + 1 -> only PC breaks.            *)
(*  EffectRedelivery recovery continues at F + 1 but an outbox re-delivers *)
(*                   the frontier task's (non-gated) effect -> only EO     *)
(*                   breaks.                                               *)
(***************************************************************************)
EXTENDS ResumePlane

CONSTANTS NondetRegate, StateRebuild, EffectRedelivery

ASSUME \A s \in {NondetRegate, StateRebuild, EffectRedelivery} : s \in BOOLEAN

SepRecover ==
    /\ crashes < MaxCrashes
    /\ crashes' = crashes + 1
    /\ pc' = frontier + 1
    /\ \E armed \in (IF NondetRegate /\ frontier + 1 = IP THEN BOOLEAN ELSE {FALSE}) :
          /\ pending' = armed
          /\ recHist' = recHist \cup {[f |-> frontier, d |-> <<frontier + 1, armed>>]}
    /\ effects' = IF EffectRedelivery /\ frontier >= 1 /\ frontier # IP
                  THEN [effects EXCEPT ![frontier] = @ + 1] ELSE effects
    /\ reentered' = (reentered \/ (StateRebuild /\ frontier >= 1))
    /\ UNCHANGED <<log, frontier, pointer, consumed, writes, resumes, strays>>

SepNext == Progress \/ SepRecover

SepSpec == Init /\ [][SepNext]_vars /\ WF_vars(SepNext)
=============================================================================
