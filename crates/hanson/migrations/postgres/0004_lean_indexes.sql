-- Only the audit reads transfers, and it scans them all: these indexes cost every trade
-- three index inserts and bought nothing.
DROP INDEX transfers_from;
DROP INDEX transfers_to;
