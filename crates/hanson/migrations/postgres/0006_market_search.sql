-- Substring search over question and description through trigram indexes (LIKE '%...%').
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX markets_question_trgm ON markets USING gin (question_lower gin_trgm_ops);
CREATE INDEX markets_description_trgm ON markets USING gin (description_lower gin_trgm_ops);
