//! UI texts in English and Russian. Texts the engine writes (check
//! observations, example rationales) come already in the chosen language.

use medallion_engine::Lang;

/// The UI text for `key` in `lang`; the key itself if unknown (visible in review).
pub fn t(lang: Lang, key: &str) -> &'static str {
    let (en, ru) = match key {
        "app_title" => ("Medallion Playground", "Medallion Playground"),
        "tagline" => ("bronze → silver → gold, live in your browser", "bronze → silver → gold вживую в браузере"),
        "pipeline" => ("Pipeline", "Пайплайн"),
        "bronze_hint" => ("raw, append-only", "как есть, только добавление"),
        "silver_hint" => ("cleaned by the rule registry", "очищено реестром правил"),
        "gold_hint" => ("SQL over silver", "SQL поверх silver"),
        "rows" => ("rows", "строк"),
        "add_file" => ("Add file…", "Добавить файл…"),
        "drop_here" => ("drop CSV / JSON Lines here", "перетащите CSV / JSON Lines"),
        "rules" => ("Rule registry", "Реестр правил"),
        "rules_hint" => (
            "Applied in order: filters → normalizations → enrichments. Edit an expression and everything downstream recomputes.",
            "Порядок: фильтры → нормализация → обогащение. Измените выражение — всё ниже пересчитается.",
        ),
        "export_md" => ("Export as markdown", "Экспорт в markdown"),
        "checks" => ("Quality checks", "Проверки качества"),
        "row" => ("Row level", "Строки"),
        "schema" => ("Schema level", "Схема"),
        "aggregate" => ("Aggregate level", "Агрегаты"),
        "filter" => ("filter", "фильтр"),
        "normalize" => ("normalize", "нормализация"),
        "enrich" => ("enrich", "обогащение"),
        "rejected" => ("rejected", "отклонено"),
        "changed" => ("changed", "изменено"),
        "null_in" => ("NULL in", "NULL в"),
        "no_match" => ("no match", "без пары"),
        "off" => ("off", "выкл"),
        "enabled" => ("on", "вкл"),
        "showing" => ("showing", "строки"),
        "of" => ("of", "из"),
        "prev" => ("← Previous", "← Назад"),
        "next" => ("Next →", "Вперёд →"),
        "batches" => ("Batch log", "Журнал батчей"),
        "batch" => ("batch", "батч"),
        "file" => ("file", "файл"),
        "format" => ("format", "формат"),
        "records" => ("records", "записей"),
        "ingested" => ("ingested", "загружен"),
        "gold_sql" => ("Gold model SQL (reads silver only)", "SQL gold-модели (только из silver)"),
        "recomputed" => ("recomputed in", "пересчитано за"),
        "ms" => ("ms", "мс"),
        "stale" => (
            "The pipeline has errors (listed here, and marked at their rule or model): showing the results of the last good run.",
            "В пайплайне ошибки (перечислены здесь и отмечены у правила или модели): показаны результаты последнего успешного запуска.",
        ),
        "stale_gold" => (
            "A gold model has an error (listed here, and marked on its card): it shows its last good result; bronze and silver are up to date.",
            "В gold-модели ошибка (указана здесь и отмечена на карточке): она показывает последний успешный результат; bronze и silver актуальны.",
        ),
        "loading" => ("Loading the example and running the pipeline…", "Загружаем пример и запускаем пайплайн…"),
        "close" => ("Close", "Закрыть"),
        "copy_hint" => ("Select and copy:", "Выделите и скопируйте:"),
        "lookup" => ("LEFT JOIN", "LEFT JOIN"),
        "params" => ("parameters", "параметры"),
        "lang_switch" => ("Русский", "English"),
        "quarantine_hint" => ("rejected rows, with rule id and reason", "отклонённые строки с id правила и причиной"),
        "ingest_ok" => ("appended as a new batch", "добавлен как новый батч"),
        "reload" => ("Reload example", "Перезагрузить пример"),
        "columns" => ("columns", "колонок"),
        "drop_on_bronze" => (
            "Drop files on a bronze table card (bronze.…) to append them as a new batch.",
            "Перетащите файл на карточку bronze-таблицы (bronze.…), чтобы добавить его новым батчем.",
        ),
        "has_error" => ("error in the model: the count is from the last good run", "ошибка в модели: число из последнего успешного запуска"),
        "delete_rule" => ("Delete this rule", "Удалить правило"),
        "add_rule" => ("Add a rule (starts switched off):", "Добавить правило (сначала выключено):"),
        "new_rationale" => ("Why does this rule exist? Write it down for the next reader.", "Зачем это правило? Запишите для следующего читателя."),
        _ => return "?",
    };
    match lang {
        Lang::En => en,
        Lang::Ru => ru,
    }
}

/// "1 row" / "5 rows"; "1 строка" / "3 строки" / "5 строк".
pub fn rows_word(lang: Lang, n: usize) -> &'static str {
    match lang {
        Lang::En => {
            if n == 1 {
                "row"
            } else {
                "rows"
            }
        }
        Lang::Ru => match (n % 10, n % 100) {
            (1, r) if r != 11 => "строка",
            (2..=4, r) if !(12..=14).contains(&r) => "строки",
            _ => "строк",
        },
    }
}
